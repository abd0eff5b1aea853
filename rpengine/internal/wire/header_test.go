package wire

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// headerSeeds are messages for DecodeHeader's two paths: the plain shape
// the scanner takes, and every way out of it.
var headerSeeds = []string{
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"m","sessionId":"s","timestamp":"t","acknowledgedMessageId":"x"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"m","timestamp":"t","acknowledgedMessageId":"x","duplicate":true}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"capacity.update","messageId":"m","sessionId":"s","timestamp":"t","queueDepth":0,"queueLimit":8,"acceptingRequests":false}`,
	` {"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","sessionId":null,"timestamp":"t","requestId":"r"} `,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t","requestId":"r","requestId":null}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t","requestId":""}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t","sessionId":""}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":null,"type":"a","messageId":"m","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"protocolVersion":2,"type":"a","messageId":"m","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3.0,"type":"a","messageId":"m","timestamp":"t"}`,
	`{"protocol":"other","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"","messageId":"m","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"\u00e9","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"é","timestamp":"t"}`,
	`{"PROTOCOL":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t"}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t","card":{"x":1}}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t","sequence":1.5}`,
	`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t"}x`,
	`{"protocol":"gemtavern.rp_engine","type":1}`, `{}`, `[]`, `null`, ``,
}

// DecodeHeader's scanner decodes what it takes as encoding/json does: the
// same header (pointers nil or not alike) and the same error. Issue #24.
func FuzzDecodeHeader_fastPath(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHeader(data)
		want, wantErr := decodeHeaderJSON(data)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, encoding/json's %v", data, err, wantErr)
		}
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("%q: %+v, encoding/json's %+v", data, h, want)
		}
	})
}

// The plain shapes take the scanner's path, which allocates twice at most
// (strings, pointers). Issue #24.
func TestDecodeHeader_fastPathAllocs(t *testing.T) {
	for _, s := range headerSeeds[:7] {
		f := rawFields{header: true}
		if !f.scan([]byte(s)) {
			t.Errorf("%s: not taken by the scanner", s)
			continue
		}
		data := []byte(s)
		if n := testing.AllocsPerRun(20, func() { _, _ = DecodeHeader(data) }); n > 2 {
			t.Errorf("%s: %v allocations, want at most 2", s, n)
		}
	}
}

// DecodeEnvelope finds what DecodeHeader decodes, as views, with the same
// error, and allocates nothing on the scanner's path (an audio chunk
// included): the connection's reader routes every message with it.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add([]byte(s))
	}
	f.Add(chunk)
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := DecodeEnvelope(data)
		h, herr := DecodeHeader(data)
		if (err == nil) != (herr == nil) || err != nil && err.Error() != herr.Error() {
			t.Fatalf("%q: error %v, DecodeHeader's %v", data, err, herr)
		}
		if err != nil {
			return
		}
		opt := func(p *string) any {
			if p == nil {
				return nil
			}
			return *p
		}
		view := func(b []byte) any {
			if b == nil {
				return nil
			}
			return string(b)
		}
		got := []any{string(env.Type), string(env.MessageID), view(env.SessionID), view(env.RequestID)}
		want := []any{h.Type, h.MessageID, opt(h.SessionID), opt(h.RequestID)}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %q, DecodeHeader's %q", data, got, want)
		}
		if env.Checked && !utf8.Valid(data) {
			t.Fatalf("%q: checked, but not valid UTF-8", data)
		}
	})
}

func TestDecodeEnvelope_allocs(t *testing.T) {
	testutil.SkipAllocs(t)
	for _, s := range append(headerSeeds[:7], string(chunk)) {
		data := []byte(s)
		if n := testing.AllocsPerRun(20, func() { _, _ = DecodeEnvelope(data) }); n != 0 {
			t.Errorf("%.80s: %v allocations, want none", s, n)
		}
	}
}
