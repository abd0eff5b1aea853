package rpengine_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// The integration core runs over both transports: the same game code,
// the same fake engine, WebSocket (in memory) or file mailbox, each test
// inside a testing/synctest bubble, where timeouts, delays and mailbox
// polls run on the bubble's fake clock.

// link is a running server with one connected fake engine.
type link struct {
	srv *rpengine.Server
	eng *enginetest.Engine
	log *logBuf
	dir string // mailbox folder ("" over WebSocket)
}

type transport struct {
	name  string
	start func(t *testing.T, opts *rpengine.ServerOptions, eopts *enginetest.Options) *link
}

var transports = []transport{
	{"websocket", func(t *testing.T, opts *rpengine.ServerOptions, eopts *enginetest.Options) *link {
		f := newServer(t, opts)
		eng := f.dial(t, eopts)
		return &link{srv: f.srv, eng: eng, log: f.log}
	}},
	{"mailbox", func(t *testing.T, opts *rpengine.ServerOptions, eopts *enginetest.Options) *link {
		l := newMailboxServer(t, opts, "")
		l.eng = l.dialMailbox(t, eopts)
		return l
	}},
}

// testMailboxOptions polls fast, with few slots, for tests.
func testMailboxOptions(dir string) *rpengine.MailboxOptions {
	return &rpengine.MailboxOptions{Dir: dir, IntegrationID: "game", SlotCount: 32,
		ActivePoll: 2 * time.Millisecond, IdlePoll: 5 * time.Millisecond, LockStale: 2 * time.Second}
}

var testEngineMailbox = &enginetest.MailboxOptions{Poll: 2 * time.Millisecond, AckLinger: 100 * time.Millisecond}

// newMailboxServer serves a mailbox in dir (a new temporary folder when
// empty) until the test ends.
func newMailboxServer(t testing.TB, opts *rpengine.ServerOptions, dir string) *link {
	t.Helper()
	if opts == nil {
		opts = &rpengine.ServerOptions{}
	}
	if dir == "" {
		dir = filepath.Join(testutil.TempDir(t), "mailbox")
	}
	lb := &logBuf{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.Mailbox == nil {
		opts.Mailbox = testMailboxOptions(dir)
	}
	srv, err := rpengine.NewServer(opts)
	testutil.Success(t, err)
	testutil.Success(t, srv.Start())
	t.Cleanup(func() { testutil.Success(t, srv.Close()) })
	return &link{srv: srv, log: lb, dir: opts.Mailbox.Dir}
}

// dialMailbox connects a file-mode fake engine and waits until the server
// sees its session.
func (l *link) dialMailbox(t testing.TB, eopts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	ctx := ctxT(t)
	eng, err := enginetest.DialMailbox(ctx, l.dir, eopts, testEngineMailbox)
	if err != nil {
		t.Log(l.log.String())
	}
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	waitSession(t, ctx, l.srv, func(info rpengine.SessionInfo) bool { return info.ID == eng.SessionID() })
	return eng
}

// eachTransport runs f over each transport, in parallel, each inside a
// synctest bubble.
func eachTransport(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { f(t, tr) })
		})
	}
}

func TestTransports_textReply(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		ctx := ctxT(t)
		info, ok := l.srv.Session()
		testutil.Equal(t, "session live", ok, true)
		testutil.Equal(t, "session id", info.ID, l.eng.SessionID())
		testutil.Equal(t, "client version", info.ClientVersion, "enginetest")
		r, err := l.srv.Reply(ctx, textReq(testCard(t), "hello"))
		testutil.Success(t, err)
		evs := collect(t, r)
		last := evs[len(evs)-1]
		testutil.Equal(t, "end", last.Kind, rpengine.EventEnd)
		testutil.Equal(t, "end error", last.Err, error(nil))
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: hello")
		testutil.Equal(t, "token count", res.TokenCount, 6)
		for _, ev := range evs {
			if ev.Kind == rpengine.EventAnomaly {
				t.Errorf("anomaly: %v", ev.Anomaly)
			}
		}
		for _, m := range l.eng.Received() {
			if m.Err != nil {
				t.Errorf("engine refused %s: %v", m.Type, m.Err)
			}
		}
		waitStatus(t, l.srv, r.MessageID(), rpengine.MessageAcked)
	})
}

// waitStatus waits until the engine's answer to a message is known
// (acks and answers travel separately in file mode).
func waitStatus(t *testing.T, srv *rpengine.Server, id string, want rpengine.MessageState) {
	t.Helper()
	for i := 0; i < 2000 && srv.MessageStatus(id) != want; i++ {
		time.Sleep(time.Millisecond)
	}
	testutil.Equal(t, "message status", srv.MessageStatus(id), want)
}

func TestTransports_textAndAudioReply(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		ctx := ctxT(t)
		c := testCard(t)
		for round := 0; round < 2; round++ {
			r, err := l.srv.Reply(ctx, audioReq(c, "hello"))
			testutil.Success(t, err)
			var segs []int
			var offsets []time.Duration
			for _, ev := range collect(t, r) {
				switch ev.Kind {
				case rpengine.EventSegment:
					segs = append(segs, ev.Segment.Index)
					offsets = append(offsets, ev.Segment.Offset)
					testutil.Equal(t, "rate", ev.Segment.SampleRate, 44100)
					testutil.Equal(t, "samples", len(ev.Segment.Samples), 22050)
					testutil.Equal(t, "duration", ev.Segment.Duration, 500*time.Millisecond)
					want := enginetest.Synthesize(ev.Segment.Index, 0.5)
					testutil.Equal(t, "first sample", ev.Segment.Samples[100], int16(uint16(want[200])|uint16(want[201])<<8))
				case rpengine.EventAnomaly:
					t.Errorf("anomaly: %v", ev.Anomaly)
				case rpengine.EventEnd:
					testutil.Success(t, ev.Err)
				}
			}
			testutil.Equal(t, "segments", segs, []int{0, 1})
			testutil.Equal(t, "offsets", offsets, []time.Duration{0, 500 * time.Millisecond})
			res, err := r.Wait(ctx)
			testutil.Success(t, err)
			testutil.Equal(t, "text", res.Text, "I hear you. You said: hello")
			h, _ := l.eng.CardHash("game", "ari")
			testutil.Equal(t, "card hash", res.CardHash.String(), h)
		}
	})
}

func TestTransports_cards(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		ctx := ctxT(t)
		c := testCard(t)
		h, err := l.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		got, _ := l.eng.CardHash("game", "ari")
		testutil.Equal(t, "hash", h.String(), got)
		_, err = l.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		c = testCard(t, "curious", "bold")
		h3, err := l.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		got, _ = l.eng.CardHash("game", "ari")
		testutil.Equal(t, "patched hash", h3.String(), got)
		// Resync: the engine lost the card; the reply is retried with a
		// snapshot, same requestId.
		l.eng.SetFaults(enginetest.Faults{ForceResync: 1})
		r, err := l.srv.Reply(ctx, textReq(c, "again"))
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: again")
		testutil.Equal(t, "modes", cardModes(l.eng), []string{"snapshot", "reference", "patch", "reference", "snapshot"})
	})
}

func TestTransports_cancelAndErrors(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, &enginetest.Options{Faults: enginetest.Faults{Delay: 20 * time.Millisecond}})
		ctx := ctxT(t)
		c := testCard(t)
		// Cancel.
		r, err := l.srv.Reply(ctx, textReq(c, "a long story to cancel"))
		testutil.Success(t, err)
		_, err = r.Next(ctx)
		testutil.Success(t, err)
		testutil.Success(t, r.Cancel(ctx))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrCancelled)
		testutil.Equal(t, "reason", err.Error(), "rpengine: reply cancelled: requested_by_game")
		// Capacity gating: TestTransports_capacityGating.
		// Engine errors become typed errors.
		for _, code := range []string{"prompt_too_large", "some_future_code"} {
			l.eng.SetFaults(enginetest.Faults{ErrorCode: code, ErrorAfterAccept: true})
			r, err := l.srv.Reply(ctx, textReq(c, "x"))
			testutil.Success(t, err)
			_, err = r.Wait(ctx)
			var re *rpengine.RequestError
			testutil.ErrorAs(t, err, &re)
			testutil.Equal(t, "code", re.Code, code)
			testutil.Equal(t, "requestId", re.RequestID, r.RequestID())
		}
		// invalid_payload: no ack, attributed to the refused message.
		l.eng.SetFaults(enginetest.Faults{})
		r, err = l.srv.Reply(ctx, textReq(c, "fine"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
	})
}

func TestTransports_duplicatesAndReconnect(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, &enginetest.Options{Faults: enginetest.Faults{Duplicate: true}})
		ctx := ctxT(t)
		c := testCard(t)
		r, err := l.srv.Reply(ctx, audioReq(c, "twice"))
		testutil.Success(t, err)
		var segs []int
		for _, ev := range collect(t, r) {
			if ev.Kind == rpengine.EventSegment {
				segs = append(segs, ev.Segment.Index)
			}
		}
		testutil.Equal(t, "segments once each", segs, []int{0, 1})
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: twice")
		// A reconnect starts a new session with an empty card cache.
		old := l.eng.SessionID()
		l.eng.SetFaults(enginetest.Faults{})
		testutil.Success(t, l.eng.Reconnect(ctx))
		waitSession(t, ctx, l.srv, func(info rpengine.SessionInfo) bool { return info.ID == l.eng.SessionID() })
		if l.eng.SessionID() == old {
			t.Fatal("same session after reconnect")
		}
		r, err = l.srv.Reply(ctx, textReq(c, "new"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
		modes := cardModes(l.eng)
		testutil.Equal(t, "snapshot after reconnect", modes[len(modes)-1], "snapshot")
	})
}

func TestTransports_voiceCapture(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		ctx := ctxT(t)
		r, err := l.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: testCard(t), Transcript: true})
		testutil.Success(t, err)
		var states []string
		var transcript string
		for _, ev := range collect(t, r) {
			switch ev.Kind {
			case rpengine.EventCapture:
				if s := ev.Capture.State; len(states) == 0 || states[len(states)-1] != s {
					states = append(states, s)
				}
				transcript = ev.Capture.Transcript
			}
		}
		testutil.Equal(t, "states", states, []string{"listening", "speech_started", "speech_ended"})
		testutil.Equal(t, "transcript", transcript, "Hello there.")
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: Hello there.")
	})
}
