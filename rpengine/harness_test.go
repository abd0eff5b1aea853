package rpengine

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// The tests of the root package's internals run a Server's session on a
// fake transport in memory: messages go in through the session as its
// transport's reader hands them over, and what the session writes is
// recorded. Nothing waits on a clock: a test waits for what it expects
// to be written (fakeTransport.wait), and timeouts run in synctest
// bubbles.

// fakeTransport records what the session sends.
type fakeTransport struct {
	mu      sync.Mutex
	sent    [][]byte
	closed  int
	changed chan struct{} // closed and replaced at each send
}

func (f *fakeTransport) Send(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, append([]byte(nil), b...))
	if f.changed != nil {
		close(f.changed)
	}
	f.changed = make(chan struct{})
	return nil
}

func (f *fakeTransport) Close(code int, _ string) {
	f.mu.Lock()
	f.closed = code
	f.mu.Unlock()
}

func (f *fakeTransport) closedCode() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// messages returns the sent messages of type typ, decoded.
func (f *fakeTransport) messages(typ string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.sent {
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// waitFor waits until ok holds after a send, or a guard of a minute
// (against a hang; not a timing assertion) passes, or the test ends.
func (f *fakeTransport) waitFor(t testing.TB, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		f.mu.Lock()
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		f.mu.Unlock()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if t.Context().Err() == nil {
				t.Error("what the test waits for was never sent")
			}
			return
		}
	}
}

// wait waits until n messages of type typ were sent and returns them.
func (f *fakeTransport) wait(t testing.TB, typ string, n int) []map[string]any {
	t.Helper()
	f.waitFor(t, func() bool { return len(f.messages(typ)) >= n })
	return f.messages(typ)
}

const unitCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`

type unit struct {
	t    *testing.T
	srv  *Server
	ft   *fakeTransport
	c    *conn
	card *card.Card
	n    int
}

// attachUnit starts a session of srv on the fake transport ft, counted
// as a handshake but not as a connection (no reader ends it).
func attachUnit(t *testing.T, srv *Server, ft transport.Transport, hello string) *conn {
	t.Helper()
	srv.mu.Lock()
	srv.handshake++
	srv.mu.Unlock()
	s, err := srv.Attach(ft, transport.Hello{MessageID: hello, ClientVersion: "test"})
	testutil.Success(t, err)
	return s.(*conn)
}

func newUnit(t *testing.T, opts *ServerOptions) *unit {
	t.Helper()
	if opts == nil {
		opts = &ServerOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := NewServer(opts)
	testutil.Success(t, err)
	ft := &fakeTransport{}
	c := attachUnit(t, srv, ft, "hello-1")
	t.Cleanup(func() { srv.Close() }) // ends the session and its writer
	crd, err := card.Parse([]byte(unitCard))
	testutil.Success(t, err)
	return &unit{t: t, srv: srv, ft: ft, c: c, card: crd}
}

// recv delivers an engine message and waits until what the session
// posted in answer (acks) is written.
func (u *unit) recv(b []byte) {
	u.c.Receive(session.Inbound{Msg: b})
	<-u.c.w.Drained()
}

// in delivers an engine message with the given fields.
func (u *unit) in(typ string, fields map[string]any) string {
	u.n++
	// The count keeps ids unique where the clock is coarse (Windows).
	id := "e" + strings.Repeat("x", u.n%3) + string(rune('a'+u.n%26)) + strconv.Itoa(u.n) + time.Now().Format("150405.000000000")
	b, err := wire.Encode(typ, id, u.c.info.ID, time.Now(), fields)
	testutil.Success(u.t, err)
	u.recv(b)
	return id
}

// end ends the session with err and waits until it has been taken down.
func (u *unit) end(err error) {
	u.c.End(err)
	<-u.c.Done()
}

// accept delivers reply.accepted for r1.
func (u *unit) accept() {
	u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 1})
}

// reply sends request r1 and returns it once it is sent. Reply itself
// returns only at the engine's decision (reply.accepted, issue #15), which
// these tests deliver by hand, so it runs on its own goroutine until then
// (or until the test ends).
func (u *unit) reply(ctx context.Context) *Reply {
	return u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1"})
}

// request is reply for any request.
func (u *unit) request(ctx context.Context, req ReplyRequest) *Reply {
	u.t.Helper()
	return u.start(ctx, req.RequestID, "reply.request", func(ctx context.Context) error {
		_, err := u.srv.Reply(ctx, req)
		return err
	})
}

// capture is request for a voice capture.
func (u *unit) capture(ctx context.Context, req CaptureRequest) *Reply {
	u.t.Helper()
	return u.start(ctx, req.RequestID, "voice.capture.start", func(ctx context.Context) error {
		_, err := u.srv.Capture(ctx, req)
		return err
	})
}

// start runs call on its own goroutine until the test ends and returns
// the request id's Reply once its message (of type typ) is written.
func (u *unit) start(ctx context.Context, id, typ string, call func(context.Context) error) *Reply {
	u.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	count := func() int {
		n := 0
		for _, m := range u.ft.messages(typ) {
			if m["requestId"] == id {
				n++
			}
		}
		return n
	}
	before := count()
	go func() { done <- call(ctx) }()
	u.t.Cleanup(func() {
		cancel()
		<-done
	})
	u.ft.waitFor(u.t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
			return count() > before
		}
	})
	var r *Reply
	_ = u.c.call(func(time.Time) { r = u.c.replies[id] })
	if r == nil {
		u.t.Fatalf("Reply %s: %v", id, <-done)
	}
	return r
}

// queued returns how many events r holds for its consumer.
func queued(r *Reply) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue) - r.head
}

// sentAfter returns a channel closed once more than n messages of type
// typ were sent (or the test ended).
func (u *unit) sentAfter(typ string, n int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		u.ft.waitFor(u.t, func() bool { return len(u.ft.messages(typ)) > n })
	}()
	return ch
}
