package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// env is a client connected to a fake Harness over an in-memory pipe.
// Build it inside a synctest bubble; stop it with close (registered as a
// cleanup).
type env struct {
	t   *testing.T
	h   *xtytest.Server
	c   *xty.Client
	rec *testutil.SyncBuffer
}

// baseOptions are valid client options; the URL is the default address,
// which is also every in-memory fake's.
func baseOptions() *xty.Options {
	return &xty.Options{AdapterID: "test-adapter", GameID: "testgame", Version: "0.1.0"}
}

// newEnv connects a client (configured by copts, then setup) to a fake
// configured by hopts.
func newEnv(t *testing.T, hopts *xtytest.Options, copts *xty.Options, setup func(*xty.Client)) *env {
	t.Helper()
	h := xtytest.NewServer(hopts)
	t.Cleanup(h.Close) // after the client's, registered below
	if copts == nil {
		copts = baseOptions()
	}
	e := &env{t: t, h: h, rec: &testutil.SyncBuffer{}}
	copts.URL, copts.HTTPClient = h.URL, h.Client()
	if copts.Recorder == nil {
		copts.Recorder = e.rec
	}
	c, err := xty.New(copts)
	testutil.Success(t, err)
	e.c = c
	if setup != nil {
		setup(c)
	}
	t.Cleanup(func() { c.Close() })
	testutil.Success(t, c.Connect(context.Background()))
	return e
}

// next returns the next event, skipping kinds in skip, failing after a
// minute of (fake) time.
func (e *env) next(skip ...xty.EventKind) xty.Event {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ev, err := e.c.Next(ctx)
		if err != nil {
			e.t.Fatalf("no event within a minute: %v", err)
		}
		if !contains(skip, ev.Kind) {
			return ev
		}
	}
}

// recording returns what the client recorded so far: the recording is
// asynchronous (issue #17), so it first lets the recorder's goroutine
// write what waits. Call it from the bubble's own goroutine.
func (e *env) recording() string {
	synctest.Wait()
	return e.rec.String()
}

// drain returns every event queued now.
func (e *env) drain() []xty.Event { return e.c.Poll(nil) }

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// kinds lists the kinds of evs.
func kinds(evs []xty.Event) []xty.EventKind {
	out := make([]xty.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// only keeps the events of the given kinds.
func only(evs []xty.Event, ks ...xty.EventKind) []xty.Event {
	var out []xty.Event
	for _, ev := range evs {
		if contains(ks, ev.Kind) {
			out = append(out, ev)
		}
	}
	return out
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	testutil.Success(t, json.Unmarshal(raw, &v))
	return v
}

// slowLog is a recorder that dawdles while it writes a line containing
// stall, yielding the processor many times before the line lands, so that
// anything the message caused would be written first if the client
// recorded the message late.
type slowLog struct {
	stall string
	buf   testutil.SyncBuffer
}

func (l *slowLog) Write(p []byte) (int, error) {
	if strings.Contains(string(p), l.stall) {
		for range 2000 {
			runtime.Gosched()
		}
	}
	return l.buf.Write(p)
}
