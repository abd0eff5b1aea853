package wire

import (
	"reflect"
	"testing"
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
