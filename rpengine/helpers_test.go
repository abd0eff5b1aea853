package rpengine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

const cardJSON = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"A fox.","personality":"curious","scenario":"a forest","first_mes":"Hi!","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"test","character_version":"1","alternate_greetings":[],"tags":["fox"],"extensions":{}}}`

func cardJSONWith(mutate ...string) string {
	doc := cardJSON
	for i := 0; i+1 < len(mutate); i += 2 {
		doc = strings.Replace(doc, mutate[i], mutate[i+1], 1)
	}
	return doc
}

func testCard(t testing.TB, mutate ...string) *card.Card {
	t.Helper()
	c, err := card.Parse([]byte(cardJSONWith(mutate...)))
	testutil.Success(t, err)
	return c
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// logBuf collects log lines for assertions.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuf) waitFor(t testing.TB, sub string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if strings.Contains(l.String(), sub) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log has no %q:\n%s", sub, l.String())
}

type fixture struct {
	srv  *rpengine.Server
	url  string
	port int
	log  *logBuf
}

// newServer serves on an ephemeral loopback port until the test ends.
func newServer(t testing.TB, opts *rpengine.ServerOptions) *fixture {
	t.Helper()
	if opts == nil {
		opts = &rpengine.ServerOptions{}
	}
	lb := &logBuf{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts.Addr = "127.0.0.1:0"
	srv, err := rpengine.NewServer(opts)
	testutil.Success(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		testutil.Success(t, srv.Close())
		if err := <-done; !errors.Is(err, rpengine.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	port := ln.Addr().(*net.TCPAddr).Port
	return &fixture{srv: srv, port: port, log: lb, url: "ws://127.0.0.1:" + strconv.Itoa(port) + rpengine.SocketPath}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects a fake engine and waits until the server sees its session.
func (f *fixture) dial(t testing.TB, opts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, f.url, opts)
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	for {
		info, err := f.srv.WaitSession(ctx)
		testutil.Success(t, err)
		if info.ID == eng.SessionID() {
			return eng
		}
		time.Sleep(time.Millisecond)
	}
}

func textReq(c *card.Card, text string) rpengine.ReplyRequest {
	return rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Text: text}
}

func audioReq(c *card.Card, text string) rpengine.ReplyRequest {
	r := textReq(c, text)
	r.Voice = "F1"
	return r
}

// collect consumes every event of r.
func collect(t testing.TB, r *rpengine.Reply) []rpengine.Event {
	t.Helper()
	ctx := ctxT(t)
	var evs []rpengine.Event
	for {
		ev, err := r.Next(ctx)
		if err != nil {
			testutil.Equal(t, "end of events", err.Error(), "EOF")
			return evs
		}
		evs = append(evs, ev)
	}
}
