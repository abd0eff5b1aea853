package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestAppendAck checks the hand-written ack against Encode, the reference,
// for ids that need escaping and ids that do not, with and without a
// session and the duplicate flag: the same bytes but the random
// messageId, which is a fresh UUID (issue #24).
func TestAppendAck(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 14, 1, 2, 3, 456789000, time.FixedZone("x", 3600))
	for _, id := range []string{"6f1c2a4e-8d3b-4c5a-9e7f-000000000001", "m", "", "a\"b", "back\\slash", "é", "\x00\x1f", "<&>", "\u2028", "\xff", "\x7f"} {
		for _, sid := range []string{"", "s-1", "s\"2"} {
			for _, dup := range []bool{false, true} {
				got := AppendAck([]byte("prefix"), []byte(id), dup, sid, now)
				gotS := AppendAck(nil, id, dup, sid, now)
				if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(blankID(got[len("prefix"):]), blankID(gotS)) {
					t.Fatalf("%q: []byte and string forms differ: %s, %s", id, got, gotS)
				}
				var m struct{ MessageID string }
				if err := json.Unmarshal(gotS, &m); err != nil || len(m.MessageID) != 36 {
					t.Fatalf("%q: %s: %v", id, gotS, err)
				}
				want, err := Encode(TypeAck, m.MessageID, sid, now, Ack{AcknowledgedMessageID: id, Duplicate: dup})
				testutil.Success(t, err)
				if !bytes.Equal(gotS, want) {
					t.Fatalf("AppendAck\n %s\nEncode\n %s", gotS, want)
				}
			}
		}
	}
}

// TestAppendAck_allocs pins the ack of a plain id into a buffer with room
// at no allocation.
func TestAppendAck_allocs(t *testing.T) {
	testutil.SkipAllocs(t)
	id, buf := []byte("6f1c2a4e-8d3b-4c5a-9e7f-000000000001"), make([]byte, 0, 512)
	now := time.Now()
	testutil.Equal(t, "allocations", testing.AllocsPerRun(100, func() {
		buf = AppendAck(buf[:0], id, true, "0b8e5d2c-4f6a-4e1b-8c3d-7a9f1e2b3c4d", now)
	}), 0.0)
}

// blankID replaces the UUID of the messageId that follows the envelope's
// type with x's.
func blankID(b []byte) []byte {
	b = bytes.Clone(b)
	if i := bytes.Index(b, []byte(`"messageId":"`)); i >= 0 && len(b) >= i+13+36 {
		copy(b[i+13:i+13+36], bytes.Repeat([]byte("x"), 36))
	}
	return b
}
