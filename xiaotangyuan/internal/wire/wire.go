// Package wire holds the XiaoTangYuan game protocol v1.1 on the wire
// (JSON-RPC 2.0, one object per WebSocket text frame), shared by the
// client (package xiaotangyuan) and the fake Harness (xtytest): method
// names, error codes, limits, the frame and its encodings, and the params
// and results of every method and notification. docs/xiaotangyuan-protocol.md
// says where each fact comes from.
//
// Decoding is not shared: the client reads strictly, and the fake reads as
// the gateway does (a member set to null is given, optional strings of the
// wrong type are ignored), which is looser.
package wire

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ProtocolVersion is the version the client sends and the fake answers.
const ProtocolVersion = "1.1"

// MaxMessageSize is the gateway's limit on one incoming message (1 MiB):
// a bigger one is closed with 1009 and takes the gateway process down. It
// limits nothing the gateway sends.
const MaxMessageSize = 1 << 20

// MaxRoleInstructions is the gateway's limit on context.roleInstructions,
// in UTF-16 code units (JavaScript string length), after trimming.
const MaxRoleInstructions = 2000

// The game's requests to the Harness.
const (
	MethodHello      = "adapter.hello"
	MethodChat       = "chat.send"
	MethodRetry      = "chat.retry"
	MethodCompose    = "assistant.compose"
	MethodState      = "state.update"
	MethodVoiceStart = "voice.start"
	MethodVoiceStop  = "voice.stop"
	MethodPing       = "gateway.ping"
)

// MethodAtom is the Harness's request to the game.
const MethodAtom = "game.atom.execute"

// The Harness's notifications.
const (
	NoteReady       = "gateway.ready"
	NoteStatus      = "assistant.status"
	NoteTextStart   = "assistant.text.start"
	NoteTextDelta   = "assistant.text.delta"
	NoteLegacyDelta = "assistant.delta" // only to an adapter without CapTextStream
	NoteTextDone    = "assistant.text.done"
	NoteTextCancel  = "assistant.text.cancel"
	NotePresent     = "assistant.present"
	NoteError       = "assistant.error"
)

// CapTextStream is the capability that stops the legacy assistant.delta.
const CapTextStream = "assistant.text-stream"

// JSON-RPC error codes. The gateway answers every validation and runtime
// failure with CodeServer and free text, and malformed frames with
// CodeParse and id null (never -32600).
const (
	CodeParse          = -32700
	CodeInvalidParams  = -32602 // sent by the client for bad game.atom.execute params
	CodeMethodNotFound = -32601 // sent by the client for requests it does not know
	CodeServer         = -32000
	CodeAtomFailed     = -32010 // an atom failed (the DST adapter's convention)
)

// Patterns the gateway checks.
var (
	SaveIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	AtomPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{2,79}$`)
)

// Trim returns s without the leading and trailing white space that the
// gateway's JavaScript String.prototype.trim removes (ECMAScript
// WhiteSpace and LineTerminator), with which it trims every string it
// reads (docs/xiaotangyuan-protocol.md, "How params are read"). Unlike
// strings.TrimSpace it removes U+FEFF and keeps U+0085.
func Trim(s string) string { return strings.TrimFunc(s, isJSSpace) }

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// Frame is one JSON-RPC 2.0 message. ID is kept raw, so that the
// Harness's UUID string ids are echoed byte for byte.
type Frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ValidID reports whether a raw id is a JSON string, number or null.
func ValidID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
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

// AppendRequest appends a request with the integer id (id > 0) or a
// notification (id == 0). params nil omits the member.
func AppendRequest(dst []byte, id int64, method string, params any) ([]byte, error) {
	var raw json.RawMessage
	if id > 0 {
		raw = strconv.AppendInt(nil, id, 10)
	}
	return appendFrame(dst, raw, method, params)
}

// EncodeRequest encodes a request with a raw id (the Harness's UUID
// strings), or a notification when id is nil.
func EncodeRequest(id json.RawMessage, method string, params any) ([]byte, error) {
	return appendFrame(nil, id, method, params)
}

func appendFrame(dst []byte, id json.RawMessage, method string, params any) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id != nil {
		dst = append(append(dst, `,"id":`...), id...)
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

// EncodeResponse encodes the answer to a request: e when not nil, else
// result (JSON null when nil). An absent id is answered with id null.
func EncodeResponse(id json.RawMessage, result any, e *Error) ([]byte, error) {
	f := Frame{JSONRPC: "2.0", ID: id, Error: e}
	if len(id) == 0 {
		f.ID = json.RawMessage("null")
	}
	if e == nil {
		r, err := json.Marshal(result)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		f.Result = r
	}
	return json.Marshal(f)
}
