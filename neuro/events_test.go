package neuro_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// TestClient_bareStartupIsNoAck: a startup from the server without a
// session acknowledges nothing: no StartupAck with empty fields, and the
// message is reported as malformed. Issue #19 item 5.
func TestClient_bareStartupIsNoAck(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		e.wait("startup", func() bool { return len(e.srv.Commands()) > 0 })
		e.srv.Send("startup", nil)
		e.srv.Send("startup", map[string]any{})
		e.srv.Send("startup", map[string]any{"session": nil})
		e.srv.Send("startup", map[string]any{"session": map[string]any{}}) // names no character either
		e.wait("errors", func() bool { return len(e.warnings()) == 4 })
		acks := e.eventsOf(func(ev neuro.Event) bool { _, ok := ev.(neuro.StartupAck); return ok })
		for _, ev := range acks {
			if ack := ev.(neuro.StartupAck); ack.SessionID == "" {
				t.Errorf("ack without a session: %+v", ack)
			}
		}
		want := 0 // Randy never acknowledges
		if m.mode == neurotest.Strict {
			want = 1 // one per connect
			if m.restart {
				want = 2
			}
		}
		testutil.Equal(t, "acks", len(acks), want)
		for _, err := range e.warnings() {
			var pe *neuro.ProtocolError
			testutil.ErrorAs(t, err, &pe)
			testutil.Equal(t, "command", pe.Command, "startup")
		}
	})
}

// TestClient_ackWithoutDisplayName: an acknowledgement without
// displayName names the character by its id, as the official SDKs do
// (docs/neuro-protocol.md). Issue #33 item 1.
func TestClient_ackWithoutDisplayName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &neurotest.Options{Ack: &neuro.StartupAck{SessionID: "s1", CharacterID: "evil"}}, nil)
		e.start()
		isAck := func(ev neuro.Event) bool { _, ok := ev.(neuro.StartupAck); return ok }
		e.wait("ack", func() bool { return len(e.eventsOf(isAck)) == 1 })
		testutil.Equal(t, "ack", e.eventsOf(isAck)[0], neuro.Event(neuro.StartupAck{SessionID: "s1", CharacterID: "evil", DisplayName: "evil"}))
	})
}
