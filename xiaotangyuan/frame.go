package xiaotangyuan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// MaxMessageSize is the protocol's limit on one WebSocket message, in
// bytes (1 MiB). Every outbound message is checked against it before it is
// sent. The Harness does not hold itself to it, so the client reads more
// (see Options.ReadLimit).
const MaxMessageSize = 1 << 20

// frameKind classifies a decoded JSON-RPC message.
type frameKind uint8

const (
	kindRequest      frameKind = iota + 1 // method and id (id may be null)
	kindNotification                      // method, no id member
	kindResponse                          // result or error, and id
)

// frame is one JSON-RPC 2.0 message on the wire. ID is kept raw so that a
// Harness request id (a UUID string) is echoed byte for byte.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

var errFrame = errors.New("invalid JSON-RPC frame")

// parseFrame decodes and classifies one incoming message. It accepts only
// a single JSON-RPC 2.0 object (no batches) and returns an error wrapping
// errFrame saying what is wrong otherwise. It does not keep b.
func parseFrame(b []byte) (frame, frameKind, error) {
	var f frame
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
	if f.ID != nil && !validID(f.ID) {
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

// validID reports whether a raw id is a JSON string, number or null.
func validID(id json.RawMessage) bool {
	switch c := id[0]; {
	case c == '"':
		return true
	case c == 'n':
		return string(id) == "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return true
	}
	return false
}

// clientID returns the id of a response to one of this client's requests:
// a positive decimal integer as the client writes them.
func clientID(id json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(id), 10, 64)
	return n, err == nil && n > 0
}

// appendRequest appends a request (id > 0) or a notification (id == 0).
func appendRequest(dst []byte, id int64, method string, params any) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id > 0 {
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendInt(dst, id, 10)
	}
	m, err := json.Marshal(method)
	if err != nil {
		return dst, err
	}
	dst = append(append(dst, `,"method":`...), m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return dst, fmt.Errorf("encode params: %w", err)
		}
		dst = append(append(dst, `,"params":`...), p...)
	}
	return append(dst, '}'), nil
}

// encodeResponse encodes the answer to a Harness request; exactly one of
// result and e is used.
func encodeResponse(id json.RawMessage, result json.RawMessage, e *wireError) ([]byte, error) {
	f := frame{JSONRPC: "2.0", ID: id, Result: result, Error: e}
	if len(id) == 0 {
		f.ID = json.RawMessage("null")
	}
	return json.Marshal(f)
}

// checkSize refuses a message the Harness could not take.
func checkSize(b []byte) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(b), MaxMessageSize)
	}
	return nil
}
