package rpengine_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// stuckWriter blocks every Write until release is closed.
type stuckWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// Issue #17: the connection's reader never waits for the game's code. A
// Recorder that does not return (a log file on a stalled disk) held the
// reader, and with it every reply, for as long as it took; now its lines
// wait for a goroutine of their own, and Shutdown writes them.
func TestServer_slowRecorder(t *testing.T) {
	t.Parallel()
	w := &stuckWriter{release: make(chan struct{})}
	f := newServer(t, &rpengine.ServerOptions{Recorder: w})
	f.dial(t, nil)
	ctx := ctxT(t)
	r, err := f.srv.Reply(ctx, textReq(testCard(t), "hello"))
	testutil.Success(t, err)
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, "I hear you. You said: hello")
	close(w.release)
	testutil.Success(t, f.srv.Close())
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, want := range []string{`"type":"reply.request"`, `"type":"reply.completed"`} {
		if !strings.Contains(w.buf.String(), want) {
			t.Errorf("the recording lacks %s", want)
		}
	}
}
