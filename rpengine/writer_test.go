package rpengine

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// stuckTransport is an engine that stops reading once welcome is
// written: every later write blocks until release.
type stuckTransport struct {
	fakeTransport
	writes  atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (s *stuckTransport) Send(b []byte) error {
	if s.writes.Add(1) > 2 { // the ack of hello and welcome go through
		<-s.release
	}
	return s.fakeTransport.Send(b)
}

func (s *stuckTransport) unstick() { s.once.Do(func() { close(s.release) }) }

// stuckSession is a live session on a stuck transport.
func stuckSession(t *testing.T, opts *ServerOptions) (*conn, *stuckTransport) {
	opts.Logger = slog.New(slog.DiscardHandler)
	srv, err := NewServer(opts)
	testutil.Success(t, err)
	st := &stuckTransport{release: make(chan struct{})}
	sess := attachUnit(t, srv, st, "hello-1")
	t.Cleanup(func() {
		st.unstick()
		srv.Close()
	})
	return sess, st
}

// Issue #17: the reader never waits for a write. It wrote each ack to the
// socket itself and waited up to WriteTimeout for an engine that did not
// read (xiaotangyuan's protocol notes call this the way to deadlock both
// sides); now it posts the acks to the session's writer and goes on.
func TestSession_readerNeverWaitsForWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sess, st := stuckSession(t, &ServerOptions{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 100 {
				b, _ := wire.Encode("capacity.update", "cap-"+strconv.Itoa(i), sess.info.ID, time.Now(),
					map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
				sess.Receive(session.Inbound{Msg: b})
			}
		}()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("the reader waits for the stuck engine to read")
		}
		info := sess.snapshot()
		testutil.Equal(t, "every message handled", info.QueueLimit, 20)
		st.unstick()
		<-sess.w.Drained()
		testutil.Equal(t, "every ack written", len(st.messages("ack")), 101) // hello's too
	})
}

// Issue #17, the writer's overflow policy: 1024 posted messages may wait;
// then the reader waits for the writer, and once the writer has taken
// nothing for WriteTimeout the connection is closed with 1008.
func TestSession_writerOverflow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sess, st := stuckSession(t, &ServerOptions{WriteTimeout: 10 * time.Second})
		ack := func(id string) { // an engine message, acked
			b, _ := wire.Encode("x.kind", id, sess.info.ID, time.Now(), nil)
			sess.Receive(session.Inbound{Msg: b})
		}
		// The writer goroutine took the first ack and is stuck writing it.
		ack("first")
		synctest.Wait()
		for i := range 1024 { // the bound of transport.Writer's posts
			ack("a" + strconv.Itoa(i))
		}
		testutil.Equal(t, "queue full, nothing closed", st.closedCode(), 0)
		start := time.Now()
		ack("one too many") // waits for room
		testutil.Equal(t, "waited the write timeout", time.Since(start), 10*time.Second)
		testutil.Equal(t, "closed", st.closedCode(), transport.ClosePolicy)
	})
}
