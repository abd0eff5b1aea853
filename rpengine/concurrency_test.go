package rpengine_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
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

// Issue #17: each error says once where it came from ("rpengine: reply:
// rpengine: invalid card" said it twice), and its cause stays reachable.
func TestErrors_prefixOnce(t *testing.T) {
	t.Parallel()
	f := newServer(t, &rpengine.ServerOptions{FailFast: true})
	ctx := ctxT(t)
	once := func(t *testing.T, err error, start string) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), start) || strings.Count(err.Error(), "rpengine: ") != 1 {
			t.Errorf("error %q, want one starting %q with one rpengine prefix", err, start)
		}
	}
	_, err := f.srv.Reply(ctx, textReq(testCard(t, `"name":"Ari"`, `"name":" "`), "hi"))
	once(t, err, "rpengine: reply: invalid Card: ")
	var ve *card.ValidationError
	testutil.ErrorAs(t, err, &ve)
	var fe *rpengine.FieldError
	testutil.ErrorAs(t, err, &fe)
	testutil.Equal(t, "field", fe.Field, "Card")

	_, err = f.srv.Reply(ctx, textReq(testCard(t), "hi"))
	once(t, err, "rpengine: reply: ")
	testutil.ErrorIs(t, err, rpengine.ErrNotConnected)

	eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{ErrorCode: "capacity_exceeded"}})
	_, err = f.srv.Reply(ctx, textReq(testCard(t), "hi"))
	once(t, err, "rpengine: reply: engine is not accepting requests: engine refused request ")
	testutil.ErrorIs(t, err, rpengine.ErrBusy)
	var re *rpengine.RequestError
	testutil.ErrorAs(t, err, &re)
	testutil.Equal(t, "code", re.Code, "capacity_exceeded")
	eng.Close()
}
