// Package wire holds the NeuroSan HTTP API on the wire, shared by the
// client (package neurosan) and its fake server (neurosantest): the routes,
// the member names of requests and answers, and the ordered object writer
// both build their JSON with. (The message types, ChatMessage and the
// like, are public in package neurosan, which the fake imports.)
//
// Decoding is not shared: the client reads strictly, with the stream
// traps the server sets; the fake reads a request as the Python server
// does, which is looser.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// The routes under the server's root.
const (
	APIPrefix     = "/api/v1/" // then "list", or "{agent}/" and an agent route
	RouteList     = "list"
	RouteFunction = "function"
	RouteConnect  = "connectivity"
	RouteChat     = "streaming_chat"
	RouteTool     = "tool" // then "/{tool}"
	ProbeReady    = "readyz"
	ProbeLive     = "livez"
)

// Member names of the requests and answers.
const (
	UserMessage    = "user_message"
	SlyData        = "sly_data"
	ChatContext    = "chat_context"
	ChatFilter     = "chat_filter"
	ChatFilterType = "chat_filter_type"
	Args           = "args"
	ToolOutput     = "tool_output"
	ToolError      = "tool_error"
	Error          = "error"
)

// ToolAnswer is the answer of a direct tool call.
type ToolAnswer struct {
	Output  json.RawMessage            `json:"tool_output"`
	SlyData map[string]json.RawMessage `json:"sly_data"`
	Error   bool                       `json:"tool_error"`
}

// Object builds a JSON object whose members come in the order they are
// added, which is the order the server builds its dictionaries in. Raw
// values are copied as they are, never re-encoded, so that an opaque
// chat_context goes back byte for byte. The zero value builds into a new
// buffer; [Into] appends to one. The first error sticks.
type Object struct {
	// Valid, if set, checks every raw value (the client accepts Python's
	// NaN and Infinity, which encoding/json does not).
	Valid func([]byte) bool

	b       []byte
	started bool
	n       int
	err     error
}

// Into returns an Object that appends to dst.
func Into(dst []byte) Object { return Object{b: append(dst, '{'), started: true} }

// Key adds a member's name; its value must follow.
func (o *Object) Key(k string) {
	if !o.started {
		o.b, o.started = append(o.b, '{'), true
	}
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = AppendString(o.b, k)
	o.b = append(o.b, ':')
}

// Value adds v, encoded by encoding/json without HTML escaping.
func (o *Object) Value(k string, v any) {
	if o.err != nil {
		return
	}
	o.Key(k)
	o.b, o.err = AppendValue(o.b, v)
}

// Raw adds a JSON value as it is. An empty one is left out, as the server
// leaves out absent members.
func (o *Object) Raw(k string, v []byte) {
	if o.err != nil || len(v) == 0 {
		return
	}
	if o.Valid != nil && !o.Valid(v) {
		o.err = fmt.Errorf("field %q is not valid JSON", k)
		return
	}
	o.Key(k)
	o.b = append(o.b, v...)
}

// List adds an array of JSON values.
func (o *Object) List(k string, vs [][]byte) {
	o.Key(k)
	o.b = append(o.b, '[')
	o.b = append(o.b, bytes.Join(vs, []byte(","))...)
	o.b = append(o.b, ']')
}

// Members adds an object of raw values, keys sorted; an empty value is
// null.
func (o *Object) Members(k string, m map[string]json.RawMessage) {
	if o.err != nil {
		return
	}
	in := Object{Valid: o.Valid}
	in.RawMembers(m)
	b, err := in.Bytes()
	if err != nil {
		o.err = err
		return
	}
	o.Key(k)
	o.b = append(o.b, b...)
}

// RawMembers adds every member of m, keys sorted; an empty value is null.
func (o *Object) RawMembers(m map[string]json.RawMessage) {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		v := m[key]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		o.Raw(key, v)
	}
}

// Bytes ends the object and returns it ("{}" when empty), with the first
// error.
func (o *Object) Bytes() ([]byte, error) {
	if !o.started {
		return append(o.b, "{}"...), o.err
	}
	return append(o.b, '}'), o.err
}

// AppendString appends s as a JSON string.
func AppendString(b []byte, s string) []byte {
	b, _ = AppendValue(b, s) // a string always encodes
	return b
}

// AppendValue appends v as JSON without HTML escaping and without the
// encoder's trailing newline.
func AppendValue(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil
}
