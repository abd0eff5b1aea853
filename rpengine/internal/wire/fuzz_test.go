package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeHeader checks envelope decoding and validation (issue #9): no
// panic; an accepted envelope has every required field, exactly protocol
// gemtavern.rp_engine version 3; and re-encoding its header decodes to the
// same header.
func FuzzDecodeHeader(f *testing.F) {
	ok := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"m","timestamp":"t"}`
	for _, s := range []string{
		ok, `[1]`, `{"protocol":`, ``, ` {}`, `null`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3.0,"type":"x","messageId":"m","timestamp":"t"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":"3","type":"x","messageId":"m","timestamp":"t"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"m","sessionId":null,"timestamp":"t","requestId":"r"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"\ud800","timestamp":"t","sessionId":"s"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"protocolVersion":2,"type":"a","messageId":"m","timestamp":"t"}`,
		`{"PROTOCOL":"gemtavern.rp_engine","protocolVersion":3,"type":"a","messageId":"m","timestamp":"t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHeader(data)
		if err != nil {
			return
		}
		if h.Protocol != Protocol || string(h.ProtocolVersion) != "3" || h.Type == "" || h.MessageID == "" || h.Timestamp == "" {
			t.Fatalf("accepted %q as %+v", data, h)
		}
		if !json.Valid(data) || len(data) > MaxMessageBytes {
			t.Fatalf("accepted invalid or oversized input %q", data)
		}
		sid := ""
		if h.SessionID != nil {
			sid = *h.SessionID
		}
		var payload any
		if h.RequestID != nil {
			payload = map[string]string{"requestId": *h.RequestID}
		}
		b, err := Encode(h.Type, h.MessageID, sid, time.Unix(0, 0), payload)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := DecodeHeader(b)
		if err != nil {
			t.Fatalf("re-encoded %q: %v", b, err)
		}
		if h2.Type != h.Type || h2.MessageID != h.MessageID || (sid != "") != (h2.SessionID != nil) ||
			(h.RequestID == nil) != (h2.RequestID == nil) {
			t.Fatalf("round trip %+v -> %q -> %+v", h, b, h2)
		}
	})
}

// FuzzWindow checks the duplicate window against a trivially correct
// reference: the last n distinct ids.
func FuzzWindow(f *testing.F) {
	f.Add(uint8(3), []byte{1, 2, 3, 1, 4, 1, 5, 2})
	f.Add(uint8(1), []byte{7, 7, 7, 8, 7})
	f.Fuzz(func(t *testing.T, n uint8, ids []byte) {
		size := int(n%16) + 1
		w := NewWindow(size)
		var ref []string
		for _, b := range ids {
			id := strconv.Itoa(int(b % 32))
			want := false
			for _, r := range ref {
				want = want || r == id
			}
			seen := w.Seen
			if b%2 == 0 { // the two forms share the window
				seen = func(id string) bool { return w.SeenBytes([]byte(id)) }
			}
			if got := seen(id); got != want {
				t.Fatalf("Seen(%s) = %v, want %v (window %v)", id, got, want, ref)
			}
			if !want {
				ref = append(ref, id)
				if len(ref) > size {
					ref = ref[1:]
				}
			}
			if w.Len() != len(ref) {
				t.Fatalf("Len %d, want %d", w.Len(), len(ref))
			}
		}
	})
}

// Issue #9: Encode quoted the type with strconv, whose \x7f escape is not
// JSON; every string must come out as valid JSON that decodes back.
func TestEncode_quotesLikeJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"reply.request", "\x7f", "a\"b\\c", "\x00\n", "é\u2028", "\xff"} {
		b, err := Encode(s, s, s, time.Unix(0, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%q: %s: %v", s, b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if m["type"] != want || m["messageId"] != want || m["sessionId"] != want {
			t.Fatalf("%q came back as %q", s, m["type"])
		}
	}
}
