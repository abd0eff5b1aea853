package neurosan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// frameKind classifies one object of a streaming_chat body.
type frameKind int

const (
	frameMessage   frameKind = iota // {"response": {...}} with content
	frameEmpty                      // {} or an object without a response
	frameHeartbeat                  // AGENT_PROGRESS with no text, structure or anything else
	frameError                      // {"error": ...}
)

// decoder reads the JSON objects of a streaming_chat body one at a time. It
// uses encoding/json's streaming Decoder, so objects may share a line, a line
// may have any length, and the last object needs no newline. It is passive:
// no goroutines, no clock; the transport adds timeouts around it.
//
// Each object is decoded straight into a map of its top-level fields, so a
// large echoed "request" is scanned twice (find its end, skip it), as a
// line scanner plus json.Unmarshal would; the raw object is rebuilt from
// the map only when a recorder asks for it.
type decoder struct {
	dec   *json.Decoder
	lr    *limitReader
	nf    *nfReader
	found int // non-finite tokens rewritten before the current object
	top   map[string]json.RawMessage
	msg   ChatMessage
}

// newDecoder returns a decoder of r. If maxObject > 0, an object (counted
// from the end of the previous one) longer than maxObject bytes fails with
// ErrMessageTooBig before it is buffered whole. NaN, Infinity and
// -Infinity are read as Python writes them (see nonfinite.go).
func newDecoder(r io.Reader, maxObject int64) *decoder {
	lr := &limitReader{r: r, max: maxObject}
	nf := newNFReader(lr)
	return &decoder{lr: lr, nf: nf, dec: json.NewDecoder(nf)}
}

// next decodes the next object. It returns io.EOF at a clean end between
// objects. The message (d.msg) is valid until the next call.
func (d *decoder) next() (frameKind, error) {
	d.lr.mark = d.dec.InputOffset()
	d.top = nil
	if err := d.dec.Decode(&d.top); err != nil {
		return 0, d.decodeError(err)
	}
	markers := d.nf.s.found != d.found // this object had NaN or Infinity
	d.found = d.nf.s.found
	kind, err := d.classify(markers)
	if markers {
		for _, v := range d.top {
			restoreNonFinite(v) // for the recorder; idempotent
		}
	}
	return kind, err
}

func (d *decoder) decodeError(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	if errors.Is(err, ErrMessageTooBig) {
		return &DecodeError{Offset: d.lr.read, Err: err} // where reading stopped
	}
	if d.lr.err != nil {
		// The transport failed, whatever the JSON decoder made of it: Go's
		// HTTP client reports a chunked body cut short as
		// io.ErrUnexpectedEOF, a reset as a net error.
		return fmt.Errorf("%w at byte %d: %w", ErrConnectionCut, d.lr.read, d.lr.err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &DecodeError{Offset: d.lr.read, Err: err} // a body that ended inside an object
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return &DecodeError{Offset: d.end(), Err: fmt.Errorf("want a JSON object, got %s", te.Value)}
	case errors.As(err, &se):
		return &DecodeError{Offset: se.Offset, Err: err} // just past the bad byte
	}
	return err
}

// end is the offset just past the current object.
func (d *decoder) end() int64 { return d.dec.InputOffset() }

// raw rebuilds the current object (top-level keys sorted, values as
// received) for the recorder.
func (d *decoder) raw() []byte {
	if d.top == nil {
		return nil
	}
	b, _ := appendObject(nil, d.top)
	return b
}

// classify reads the current object, whose text is rewritten by the
// nfReader (with markers if it had NaN or Infinity).
func (d *decoder) classify(markers bool) (frameKind, error) {
	if d.top == nil {
		return 0, &DecodeError{Offset: d.end(), Err: errors.New("want a JSON object, got null")}
	}
	if v, ok := d.top["error"]; ok {
		if markers {
			restoreNonFinite(v)
		}
		return frameError, d.streamError(v)
	}
	resp := d.top["response"]
	if len(resp) == 0 || string(resp) == "null" {
		return frameEmpty, nil
	}
	if err := d.msg.decode(resp, markers); err != nil {
		return 0, &DecodeError{Offset: d.end(), Err: fmt.Errorf("response: %w", err)}
	}
	if isHeartbeat(&d.msg) {
		return frameHeartbeat, nil
	}
	return frameMessage, nil
}

func (d *decoder) streamError(v json.RawMessage) error {
	e := &StreamError{Offset: d.end(), Message: string(v)}
	var s string
	if json.Unmarshal(v, &s) == nil {
		e.Message = s
	}
	return e
}

// isHeartbeat reports a keep-alive frame: AGENT_PROGRESS with nothing in it
// (neuro-san issue #1038). Progress frames with a structure are messages.
func isHeartbeat(m *ChatMessage) bool {
	return m.Type == TypeAgentProgress && m.Text == "" && len(m.Structure) == 0 &&
		len(m.Origin) == 0 && len(m.ChatContext) == 0 && len(m.SlyData) == 0 &&
		len(m.Extra) == 0 && len(m.ContentBlocks) == 0 && len(m.MimeData) == 0
}

// limitReader fails once more than max bytes have been read past mark (the
// decoder's offset at the end of the previous object), so one object can
// never make the decoder buffer more than max bytes. It also keeps the first
// read error, which json.Decoder may otherwise report as a syntax error.
type limitReader struct {
	r    io.Reader
	max  int64 // <= 0: no limit
	read int64 // bytes read so far
	mark int64
	err  error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.max > 0 {
		left := l.max - (l.read - l.mark)
		if left <= 0 {
			return 0, fmt.Errorf("%w: an object exceeds %d bytes", ErrMessageTooBig, l.max)
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return n, err
}

// errorMessage extracts the "error" string of a small JSON error body, or
// returns the trimmed body itself.
func errorMessage(body []byte) string {
	var e struct{ Error json.RawMessage }
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
		return string(e.Error)
	}
	body = bytes.TrimSpace(body)
	if len(body) > 512 {
		body = body[:512]
	}
	return string(body)
}
