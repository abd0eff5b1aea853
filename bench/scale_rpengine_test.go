package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// The scaling rows of the game server (issue #31): each measures one path
// at n, 4n and 16n, and bench/run prints t(16n)/t(n) beside them. A path
// whose cost per item is constant gives 16; the target is at most 20.

// inMemory is a game server and a fake engine connected in memory
// (enginetest.Listener: no port, no kernel), so that what is timed is the
// two programs' work.
type inMemory struct {
	srv   *rpengine.Server
	l     *enginetest.Listener
	eng   *enginetest.Engine
	serve chan error
}

// newInMemory serves a game server in memory; with eopts not nil, a fake
// engine is connected and its session live.
func newInMemory(tb testing.TB, sopts *rpengine.ServerOptions, eopts *enginetest.Options) *inMemory {
	tb.Helper()
	if sopts == nil {
		sopts = &rpengine.ServerOptions{}
	}
	sopts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := rpengine.NewServer(sopts)
	if err != nil {
		tb.Fatal(err)
	}
	m := &inMemory{srv: srv, l: enginetest.NewListener(), serve: make(chan error, 1)}
	go func() { m.serve <- srv.Serve(m.l) }()
	if eopts != nil {
		eopts.HTTPClient = m.l.Client()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if m.eng, err = enginetest.Dial(ctx, m.l.URL, eopts); err != nil {
			m.close(tb)
			tb.Fatal(err)
		}
		m.waitSession(tb, m.eng.SessionID())
	}
	return m
}

// waitSession waits until the server's live session is id.
func (m *inMemory) waitSession(tb testing.TB, id string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		info, err := m.srv.WaitSession(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if info.ID == id {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (m *inMemory) close(tb testing.TB) {
	if m.eng != nil {
		m.eng.Close()
	}
	if err := m.srv.Close(); err != nil {
		tb.Error(err)
	}
	<-m.serve
}

// characterCard is the i-th of a set of distinct small cards.
func characterCard(tb testing.TB, i int) *card.Card {
	c, err := card.New(card.Data{Name: fmt.Sprintf("Character %d", i),
		Description: strings.Repeat("A character of the benchmark. ", 8), FirstMessage: "Hello."})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// BenchmarkScaleReply is one voiced reply of n sentences, each one word:
// n text deltas and n speech segments (10 ms each, one chunk), streamed
// from the fake engine in memory and read whole, event by event, by a
// game that does nothing else (the default MaxPendingAudio holds it:
// issue #31, it used to end with ErrSlowConsumer). Both programs' work
// is timed, the fake's synthesis cached.
func BenchmarkScaleReply(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			words := make([]string, n)
			for i := range words {
				words[i] = fmt.Sprintf("Word%d.", i)
			}
			m := newInMemory(b, nil, &enginetest.Options{SecondsPerSentence: 0.01,
				Responder: func(enginetest.Request) enginetest.Script { return enginetest.Script{Sentences: words} }})
			defer m.close(b)
			c := characterCard(b, 0)
			ctx := context.Background()
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				r, err := m.srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c,
					Text: "hello", Voice: "F1"})
				if err != nil {
					b.Fatal(err)
				}
				segs := 0
				for ev := range r.Events() {
					if ev.Kind == rpengine.EventSegment {
						segs++
					}
				}
				res, err := r.Wait(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if segs != n || len(strings.Fields(res.Text)) != n {
					b.Fatalf("got %d segments and %d words, want %d", segs, len(strings.Fields(res.Text)), n)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkScaleCharacters is a fresh session (the engine reconnected,
// untimed: both sides' card caches are empty) in which the game syncs n
// characters, a card each (n snapshots), then asks each for one text
// reply, all in flight at once (the engine's queue holds n).
func BenchmarkScaleCharacters(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			cards := make([]*card.Card, n)
			ids := make([]string, n)
			for i := range cards {
				cards[i], ids[i] = characterCard(b, i), fmt.Sprint("c", i)
			}
			m := newInMemory(b, nil, &enginetest.Options{QueueLimit: n})
			defer m.close(b)
			ctx := context.Background()
			replies := make([]*rpengine.Reply, n)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				b.StopTimer()
				if err := m.eng.Reconnect(ctx); err != nil {
					b.Fatal(err)
				}
				m.waitSession(b, m.eng.SessionID())
				b.StartTimer()
				for i, c := range cards {
					if _, err := m.srv.SyncCharacter(ctx, "game", ids[i], c); err != nil {
						b.Fatal(err)
					}
				}
				for i, c := range cards {
					r, err := m.srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "game", CharacterID: ids[i], Card: c, Text: "hello"})
					if err != nil {
						b.Fatal(err)
					}
					replies[i] = r
				}
				for _, r := range replies {
					if _, err := r.Wait(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkScaleDedupWindow is the game's side of n engine messages of
// distinct ids with a duplicate window of n: each is looked up among the
// n ids the game remembers, remembered in place of the oldest, handled
// (capacity.update) and acked. The engine is a bare WebSocket that writes
// messages prepared from a template and reads the acks, at most 256
// unacked at a time as a real engine's pace would keep them, so that what
// grows with n is the game's work, not a fake's bookkeeping.
func BenchmarkScaleDedupWindow(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			m := newInMemory(b, &rpengine.ServerOptions{DedupWindow: n}, nil)
			defer m.close(b)
			e := dialBare(b, m)
			defer e.c.CloseNow()
			e.burst(b, n) // fill the window: every op evicts n ids
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				e.burst(b, n)
			}
			cpu.report(b)
		})
	}
}

// bareEngine is an engine session reduced to its socket.
type bareEngine struct {
	c    *websocket.Conn
	sid  string
	seq  int
	msg  []byte
	acks chan struct{} // one per ack read
}

// dialBare connects, says hello, acks the welcome and starts reading.
func dialBare(tb testing.TB, m *inMemory) *bareEngine {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := enginetest.DialRaw(ctx, m.l.URL, &enginetest.Options{HTTPClient: m.l.Client()})
	if err != nil {
		tb.Fatal(err)
	}
	e := &bareEngine{c: c, acks: make(chan struct{}, 256)}
	e.write(tb, "hello", "hello", `,"clientVersion":"bench"`)
	for e.sid == "" {
		_, data, err := c.Read(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		var w struct{ Type, MessageID, SessionID string }
		if err := json.Unmarshal(data, &w); err != nil {
			tb.Fatal(err)
		}
		if w.Type == "welcome" {
			e.sid = w.SessionID
			e.write(tb, "ack", "ack-welcome", `,"acknowledgedMessageId":"`+w.MessageID+`"`)
		}
	}
	go func() {
		defer close(e.acks)
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
			e.acks <- struct{}{}
		}
	}()
	return e
}

// write sends one message of type typ and id whose own fields are rest.
func (e *bareEngine) write(tb testing.TB, typ, id, rest string) {
	e.msg = append(e.msg[:0], `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"`...)
	e.msg = append(append(e.msg, typ...), `","messageId":"`...)
	e.msg = append(append(e.msg, id...), `","timestamp":"2026-07-14T12:00:00.000Z"`...)
	if e.sid != "" {
		e.msg = append(append(append(e.msg, `,"sessionId":"`...), e.sid...), '"')
	}
	e.msg = append(append(e.msg, rest...), '}')
	if err := e.c.Write(context.Background(), websocket.MessageText, e.msg); err != nil {
		tb.Fatal(err)
	}
}

// burst sends n capacity.updates of new ids and waits for their acks.
func (e *bareEngine) burst(tb testing.TB, n int) {
	const ahead = 256
	unacked := 0
	var id []byte
	for range n {
		if unacked == ahead {
			e.ack(tb)
			unacked--
		}
		e.seq++
		id = strconv.AppendInt(append(id[:0], "00000000-0000-4000-8000-"...), int64(e.seq), 10)
		e.write(tb, "capacity.update", string(id), `,"queueDepth":0,"queueLimit":20,"acceptingRequests":true`)
		unacked++
	}
	for ; unacked > 0; unacked-- {
		e.ack(tb)
	}
}

func (e *bareEngine) ack(tb testing.TB) {
	if _, ok := <-e.acks; !ok {
		tb.Fatal("the game closed the connection")
	}
}
