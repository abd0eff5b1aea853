package xiaotangyuan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// MaxMessageSize is the protocol's limit on one WebSocket message, in
// bytes (1 MiB). Every outbound message is checked against it before it is
// sent. The Harness does not hold itself to it, so the client reads more
// (see Options.ReadLimit).
const MaxMessageSize = wire.MaxMessageSize

// frameKind classifies a decoded JSON-RPC message.
type frameKind uint8

const (
	kindRequest      frameKind = iota + 1 // method and id (id may be null)
	kindNotification                      // method, no id member
	kindResponse                          // result or error, and id
)

var errFrame = errors.New("invalid JSON-RPC frame")

// parseFrame decodes and classifies one incoming message. It accepts only
// a single JSON-RPC 2.0 object (no batches) and returns an error wrapping
// errFrame saying what is wrong otherwise. It does not keep b.
func parseFrame(b []byte) (wire.Frame, frameKind, error) {
	var f wire.Frame
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return f, 0, fmt.Errorf("%w: payload must be an object", errFrame)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, 0, fmt.Errorf("%w: %v", errFrame, err)
	}
	if f.JSONRPC != "2.0" {
		return f, 0, fmt.Errorf("%w: jsonrpc must be \"2.0\", got %q", errFrame, f.JSONRPC)
	}
	if f.ID != nil && !wire.ValidID(f.ID) {
		return f, 0, fmt.Errorf("%w: id must be a string, number or null", errFrame)
	}
	if f.Method != "" {
		if f.Result != nil || f.Error != nil {
			return f, 0, fmt.Errorf("%w: request %q carries result or error", errFrame, f.Method)
		}
		if f.ID == nil {
			return f, kindNotification, nil
		}
		return f, kindRequest, nil
	}
	if f.ID == nil {
		return f, 0, fmt.Errorf("%w: neither method nor id", errFrame)
	}
	if (f.Result == nil) == (f.Error == nil) {
		return f, 0, fmt.Errorf("%w: response must carry exactly one of result and error", errFrame)
	}
	return f, kindResponse, nil
}

// clientID returns the id of a response to one of this client's requests:
// a positive decimal integer as the client writes them.
func clientID(id json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(id), 10, 64)
	return n, err == nil && n > 0
}

// checkSize refuses a message the Harness could not take.
func checkSize(b []byte) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooBig, len(b), MaxMessageSize)
	}
	return nil
}
