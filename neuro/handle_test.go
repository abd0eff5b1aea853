package neuro_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// TestClient_duplicateIDValidatedOnce: a repeated id is neither validated
// nor executed again, whether it repeats while the first is being
// validated or after it was answered.
func TestClient_duplicateIDValidatedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var validated, executed atomic.Int32
		e := newEnv(t, nil, nil)
		testutil.Success(t, e.c.Register(placeAction(func(ctx context.Context, inv *neuro.Invocation) neuro.Result {
			validated.Add(1)
			time.Sleep(100 * time.Millisecond)
			return neuro.OK("")
		}, func(*neuro.Invocation) { executed.Add(1) })))
		e.start()
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		msg, _ := json.Marshal(map[string]any{"command": "action", "data": map[string]any{"id": "x1", "name": "place", "data": `{"cell":2}`}})
		e.srv.SendRaw(msg) // validated
		e.srv.SendRaw(msg) // while in flight
		e.wait("result", func() bool { return len(e.srv.Results()) == 1 })
		e.srv.SendRaw(msg) // after the answer
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "results", len(e.srv.Results()), 1)
		testutil.Equal(t, "validated", validated.Load(), int32(1))
		testutil.Equal(t, "executed", executed.Load(), int32(1))
	})
}

// TestClient_resultOfLostConnectionDropped: a verdict reached after its
// connection was lost is not sent on the next one (the id is stale) and
// the action is not executed. The drop is noted in the recording, written
// after the client's lock is released: a regression deadlocks the
// reentrant writer on sync.Mutex, which synctest does not detect, so the
// test then hangs until go test's -timeout, whose goroutine dump shows the
// Write under c.mu.
func TestClient_resultOfLostConnectionDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var executed atomic.Bool
		w := &reentrantWriter{}
		e := newEnv(t, &neurotest.Options{ResultTimeout: -1}, &neuro.Options{ReconnectMin: time.Second,
			ActionTimeout: time.Minute, Recorder: w})
		w.c.Store(e.c)
		testutil.Success(t, e.c.Register(placeAction(func(ctx context.Context, inv *neuro.Invocation) neuro.Result {
			<-release
			return neuro.OK("")
		}, func(*neuro.Invocation) { executed.Store(true) })))
		e.start()
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		e.srv.SendAction("place", `{"cell":1}`)
		synctest.Wait()
		e.srv.Disconnect()
		e.wait("reconnect", func() bool { return countCmd(e.srv.Commands(), "actions/register") == 2 })
		close(release)
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "results", len(e.srv.Results()), 0)
		testutil.Equal(t, "executed", executed.Load(), false)
		if !strings.Contains(w.String(), "dropped: result for an action of a lost connection") {
			t.Errorf("drop note missing from the recording:\n%s", w.String())
		}
	})
}

// TestClient_maxInFlightBusy: past MaxInFlight, an action is answered
// success:false at once without running its validator.
func TestClient_maxInFlightBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var validated atomic.Int32
		e := newEnv(t, &neurotest.Options{ResultTimeout: -1}, &neuro.Options{MaxInFlight: 1, ActionTimeout: time.Minute})
		testutil.Success(t, e.c.Register(placeAction(func(ctx context.Context, inv *neuro.Invocation) neuro.Result {
			validated.Add(1)
			<-release
			return neuro.OK("")
		}, nil)))
		e.start()
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		e.srv.SendAction("place", `{"cell":1}`)
		synctest.Wait()
		id2 := e.srv.SendAction("place", `{"cell":2}`)
		e.wait("busy result", func() bool { return len(e.srv.Results()) == 1 })
		r := e.srv.Results()[0]
		testutil.Equal(t, "id", r.ID, id2)
		testutil.Equal(t, "success", r.Success, false)
		if !strings.Contains(r.Message, "busy") {
			t.Errorf("message %q", r.Message)
		}
		testutil.Equal(t, "validated", validated.Load(), int32(1))
		close(release)
		e.wait("second result", func() bool { return len(e.srv.Results()) == 2 })
	})
}

// failingConn fails the first write of a message containing fail, closing
// the connection as a broken socket would.
type failingConn struct {
	neuro.Conn
	fail string
	once *sync.Once
}

func (f *failingConn) Write(ctx context.Context, b []byte) error {
	failed := false
	if strings.Contains(string(b), f.fail) {
		f.once.Do(func() { failed = true })
	}
	if failed {
		f.Conn.Close()
		return neuro.ErrClosed
	}
	return f.Conn.Write(ctx, b)
}

// TestClient_failedWriteRequeued: a message whose write failed is sent on
// the next connection, in its place.
func TestClient_failedWriteRequeued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := neurotest.NewServer(nil)
		defer srv.Close()
		once := &sync.Once{}
		c, err := neuro.New("G", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client(), ReconnectMin: time.Second})
		testutil.Success(t, err)
		neuro.SetDial(c, func(ctx context.Context, url string, next func(context.Context, string) (neuro.Conn, error)) (neuro.Conn, error) {
			conn, err := next(ctx, url)
			if err != nil {
				return nil, err
			}
			return &failingConn{Conn: conn, fail: "two", once: once}, nil
		})
		defer c.Close()
		testutil.Success(t, c.ContextSilent("one"))
		testutil.Success(t, c.ContextSilent("two"))
		testutil.Success(t, c.ContextSilent("three"))
		testutil.Success(t, c.Connect(context.Background()))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Wait(ctx, func() bool { return len(srv.Contexts()) == 3 }); err != nil {
			t.Fatalf("%v; received %v, contexts %v", err, srv.Commands(), srv.Contexts())
		}
		var got []string
		for _, m := range srv.Contexts() {
			got = append(got, m.Message)
		}
		testutil.Equal(t, "contexts", strings.Join(got, ","), "one,two,three")
		testutil.Equal(t, "commands", strings.Join(srv.Commands(), ","), "startup,context,startup,context,context")
	})
}

// stuckConn is a server that sends actions but does not read: every Write
// after the first blocks until the connection is closed, or until release
// (if not nil) is closed, after which writes go through and are kept.
type stuckConn struct {
	in      chan []byte
	closed  chan struct{}
	release chan struct{}
	once    sync.Once
	writes  atomic.Int32
	mu      sync.Mutex
	written []string // commands written after release
}

func (s *stuckConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-s.in:
		return b, nil
	case <-s.closed:
		return nil, neuro.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *stuckConn) Write(ctx context.Context, b []byte) error {
	if s.writes.Add(1) == 1 {
		return nil // startup
	}
	select {
	case <-s.closed:
		return neuro.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	case <-s.release:
		var m struct{ Command string }
		json.Unmarshal(b, &m)
		s.mu.Lock()
		s.written = append(s.written, m.Command)
		s.mu.Unlock()
		return nil
	}
}

func (s *stuckConn) Close() error { s.once.Do(func() { close(s.closed) }); return nil }

// TestClient_unreadResultsCloseSlowPeer: results are not queued without
// bound when Neuro stops reading; the connection is closed instead.
func TestClient_unreadResultsCloseSlowPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &stuckConn{in: make(chan []byte), closed: make(chan struct{})}
		var disc []error
		var mu sync.Mutex
		dials := 0
		c, err := neuro.New("G", &neuro.Options{MaxQueue: 8, ReconnectMin: time.Hour})
		testutil.Success(t, err)
		neuro.SetDial(c, func(context.Context, string, func(context.Context, string) (neuro.Conn, error)) (neuro.Conn, error) {
			dials++
			if dials > 1 {
				return nil, neuro.ErrClosed
			}
			return sc, nil
		})
		defer c.Close()
		go func() {
			for ev := range c.Events() {
				if d, ok := ev.(neuro.Disconnected); ok {
					mu.Lock()
					disc = append(disc, d.Err)
					mu.Unlock()
				}
			}
		}()
		testutil.Success(t, c.Register(neuro.Action{Name: "pass", Description: "Pass."}))
		testutil.Success(t, c.Connect(context.Background()))
		sent := 0
	loop:
		for i := range 100 {
			msg, _ := json.Marshal(map[string]any{"command": "action", "data": map[string]any{"id": strconv.Itoa(i), "name": "nope"}})
			select {
			case sc.in <- msg:
				sent++
				synctest.Wait() // let the writer take what it can
			case <-sc.closed:
				break loop
			}
		}
		synctest.Wait()
		// The full register is stuck in Write, MaxQueue replies wait
		// behind it, and the next message read finds the backlog full.
		testutil.Equal(t, "messages read before closing", sent, 8+1)
		mu.Lock()
		defer mu.Unlock()
		testutil.Equal(t, "disconnects", len(disc), 1)
		testutil.ErrorIs(t, disc[0], neuro.ErrQueueFull)
	})
}

// TestClient_reregisterFloodAnsweredOnce: requests to re-register that
// arrive while a registration of every action is still unsent are
// answered by it, so a server that keeps asking but does not read grows
// no queue. (Until issue #19 each one queued a registration, bounded only
// by closing the slow peer.)
func TestClient_reregisterFloodAnsweredOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &stuckConn{in: make(chan []byte), closed: make(chan struct{}), release: make(chan struct{})}
		var disc atomic.Int32
		c, err := neuro.New("G", &neuro.Options{MaxQueue: 8, ReconnectMin: time.Hour})
		testutil.Success(t, err)
		neuro.SetDial(c, func(context.Context, string, func(context.Context, string) (neuro.Conn, error)) (neuro.Conn, error) {
			return sc, nil
		})
		defer c.Close()
		go func() {
			for ev := range c.Events() {
				if _, ok := ev.(neuro.Disconnected); ok {
					disc.Add(1)
				}
			}
		}()
		testutil.Success(t, c.Register(neuro.Action{Name: "pass", Description: "Pass."}))
		testutil.Success(t, c.Connect(context.Background()))
		msg := []byte(`{"command":"actions/reregister_all"}`)
		for range 100 {
			sc.in <- msg // the connect-time register is stuck in Write
			synctest.Wait()
		}
		testutil.Equal(t, "disconnects", disc.Load(), int32(0))
		close(sc.release)
		synctest.Wait()
		sc.mu.Lock()
		defer sc.mu.Unlock()
		// The stuck one, then one answer for the 99 requests that came
		// after the first (which crossed it).
		testutil.Equal(t, "written", strings.Join(sc.written, ","), "actions/register,actions/register")
	})
}

// reentrantWriter is a Recorder that calls back into the client, as a
// game's logging might; it deadlocks if the client writes it under its
// own lock.
type reentrantWriter struct {
	testutil.SyncBuffer
	c atomic.Pointer[neuro.Client]
}

func (w *reentrantWriter) Write(p []byte) (int, error) {
	if c := w.c.Load(); c != nil {
		c.IsConnected()
	}
	return w.SyncBuffer.Write(p)
}
