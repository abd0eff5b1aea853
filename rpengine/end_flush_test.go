package rpengine

import (
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Issue #31, item 9: a session that ends writes what it had queued (the
// acks of the messages it processed) before its writer stops, for at
// most endFlush: an engine that reads again within it gets every ack, one
// that does not holds the end back no longer.
func TestSession_endWritesQueued(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reads   time.Duration // when the engine reads again after the end
		allAcks bool
	}{
		{"reads again within endFlush", endFlush / 2, true},
		{"reads again after endFlush", 2 * endFlush, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sess, st := stuckSession(t, &ServerOptions{})
				for i := range 100 {
					b, _ := wire.Encode("capacity.update", "cap-"+strconv.Itoa(i), sess.info.ID, time.Now(),
						map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
					sess.Receive(session.Inbound{Msg: b})
				}
				sess.End(errors.New("the game stops"))
				time.Sleep(tc.reads)
				st.unstick()
				<-sess.Done()
				acks := len(st.messages("ack"))
				if tc.allAcks {
					testutil.Equal(t, "acks written, hello's too", acks, 101)
				} else if acks == 101 {
					t.Fatal("the end waited past endFlush for an engine that does not read")
				}
			})
		})
	}
}
