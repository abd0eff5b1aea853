package rpengine

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
)

// chunkOf returns a reply.audio.chunk of segment seg holding n samples.
func chunkOf(seq, seg, n int) map[string]any {
	return map[string]any{"requestId": "r1", "sequence": seq, "segmentSequence": seg, "segmentChunkSequence": 0,
		"segmentChunkCount": 1, "data": base64.StdEncoding.EncodeToString(make([]byte, 2*n))}
}

// kinds drains r (whose end is queued) and returns its event kinds.
func kinds(t *testing.T, r *Reply) []EventKind {
	t.Helper()
	var ks []EventKind
	for {
		ev, err := r.Next(context.Background())
		if err != nil {
			testutil.ErrorIs(t, err, io.EOF)
			return ks
		}
		ks = append(ks, ev.Kind)
	}
}

// Issue #17: the speech of a reply says when it is complete, so that a
// speaker can play its end (audio.Speaker.End): EventAudioEnd after the
// last segment, once, before EventEnd; also when the reply fails
// mid-speech, and never for a reply without speech.
func TestReply_audioEnd(t *testing.T) {
	t.Parallel()
	audioStart := map[string]any{"requestId": "r1", "format": "pcm_s16le", "sampleRate": 44100, "channels": 1}
	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		u := newUnit(t, &ServerOptions{IdleTimeout: -1})
		r := u.request(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1", Voice: "F1"})
		u.accept()
		u.in("reply.audio.start", audioStart)
		u.in("reply.audio.chunk", chunkOf(0, 0, 441))
		u.in("reply.audio.chunk", chunkOf(1, 1, 441))
		u.in("reply.audio.completed", map[string]any{"requestId": "r1", "chunkCount": 2, "totalBytes": 1764, "segmentCount": 2, "durationSeconds": 0.02, "elapsedMs": 1})
		u.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text", "audio"}})
		testutil.Equal(t, "events", kinds(t, r), []EventKind{EventSegment, EventSegment, EventAudioEnd, EventEnd})
	})
	t.Run("failed mid-speech", func(t *testing.T) {
		t.Parallel()
		u := newUnit(t, &ServerOptions{IdleTimeout: -1})
		r := u.request(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1", Voice: "F1"})
		u.accept()
		u.in("reply.audio.start", audioStart)
		u.in("reply.audio.chunk", chunkOf(0, 0, 441))
		u.in("reply.cancelled", map[string]any{"requestId": "r1", "reason": "service_stopped"})
		testutil.Equal(t, "events", kinds(t, r), []EventKind{EventSegment, EventAudioEnd, EventEnd})
		_, err := r.Wait(context.Background())
		testutil.ErrorIs(t, err, ErrCancelled)
	})
	t.Run("text only", func(t *testing.T) {
		t.Parallel()
		u := newUnit(t, &ServerOptions{IdleTimeout: -1})
		r := u.reply(context.Background())
		u.accept()
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hi."})
		u.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text"}})
		testutil.Equal(t, "events", kinds(t, r), []EventKind{EventText, EventEnd})
	})
}

// Issue #17: concurrent consumers lose no wake-up. Next waited on a
// one-slot notify channel only: when one push queued several events, one
// consumer woke, took one, and the other slept through the rest and the
// end. Now each consumer that takes an event passes the wake-up on, and
// every consumer also waits on the reply's end.
func TestReply_Next_concurrentConsumers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{IdleTimeout: -1, AckTimeout: -1})
		r := u.request(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1", Voice: "F1"})
		u.accept()
		u.in("reply.audio.start", audioStartOf("r1"))
		type got struct {
			n   int
			err error
		}
		results := make(chan got, 3)
		for range 3 {
			go func() {
				n := 0
				for {
					_, err := r.Next(context.Background())
					if err != nil {
						results <- got{n, err}
						return
					}
					n++
				}
			}()
		}
		synctest.Wait() // all three wait
		// One message, three segments and the end of the speech: one push.
		u.in("reply.audio.chunk", chunkOf(1, 1, 441))
		u.in("reply.audio.chunk", chunkOf(2, 2, 441))
		u.in("reply.audio.chunk", chunkOf(0, 0, 441))
		synctest.Wait()
		u.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text", "audio"}})
		synctest.Wait()
		total := 0
		for range 3 {
			select {
			case g := <-results:
				testutil.ErrorIs(t, g.err, io.EOF)
				total += g.n
			default:
				t.Fatal("a consumer still waits after the reply ended")
			}
		}
		// Three segments, the end of the speech, an anomaly (no
		// reply.audio.completed) and the end.
		testutil.Equal(t, "events taken once each", total, 6)
	})
}

func audioStartOf(id string) map[string]any {
	return map[string]any{"requestId": id, "format": "pcm_s16le", "sampleRate": 44100, "channels": 1}
}

// Issue #17: a voice capture's progress is one event kind whose status
// accumulates; levels coalesce for a slow consumer, a change of state or
// the transcript never does.
func TestReply_captureStatus(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{IdleTimeout: -1})
	r := u.capture(context.Background(), CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, RequestID: "r1", Transcript: true})
	u.accept()
	u.in("voice.capture.state", map[string]any{"requestId": "r1", "state": "listening", "seconds": 0, "autoEndEnabled": true})
	for i := 1; i <= 5; i++ {
		u.in("voice.capture.level", map[string]any{"requestId": "r1", "seconds": float64(i) / 10, "peak": 0.5, "rms": float64(i) / 100})
	}
	u.in("voice.capture.state", map[string]any{"requestId": "r1", "state": "speech_ended", "seconds": 0.6})
	u.in("voice.capture.transcript", map[string]any{"requestId": "r1", "text": "Hello.", "language": "en", "elapsedMs": 3})
	u.in("reply.cancelled", map[string]any{"requestId": "r1", "reason": "requested_by_game"})
	var got []CaptureStatus
	for {
		ev, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		testutil.Success(t, err)
		if ev.Kind == EventCapture {
			got = append(got, ev.Capture)
		}
	}
	testutil.Equal(t, "statuses", got, []CaptureStatus{
		{State: "listening", AutoEnd: true, Elapsed: 500 * time.Millisecond, Peak: 0.5, RMS: 0.05},
		{State: "speech_ended", Elapsed: 600 * time.Millisecond, Peak: 0.5, RMS: 0.05},
		{State: "speech_ended", Elapsed: 600 * time.Millisecond, Peak: 0.5, RMS: 0.05, Transcript: "Hello.", Language: "en"},
	})
}

// Issue #17: Session carries the engine's queue (the separate Capacity
// call is gone).
func TestServer_Session_queue(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	info, ok := u.srv.Session()
	testutil.Equal(t, "live", ok, true)
	testutil.Equal(t, "before the first update", []any{info.QueueDepth, info.QueueLimit, info.Accepting}, []any{0, 0, true})
	u.in("capacity.update", map[string]any{"queueDepth": 3, "queueLimit": 20, "acceptingRequests": true})
	info, _ = u.srv.Session()
	testutil.Equal(t, "queue", []any{info.QueueDepth, info.QueueLimit, info.Accepting}, []any{3, 20, true})
	u.in("capacity.update", map[string]any{"queueDepth": 20, "queueLimit": 20, "acceptingRequests": false})
	info, err := u.srv.WaitSession(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "full", []any{info.QueueDepth, info.QueueLimit, info.Accepting}, []any{20, 20, false})
}

// Issue #17: the reader never waits for a card plan. Plans ran under the
// session's lock, which the reader takes for every message, and a large
// card's cold plan takes milliseconds; now the planner has a lock of its
// own, acceptances reach it at the next plan, and a card_resync_required
// is planned and answered by the Reply call that waits for the engine.
func TestSession_readerNeverPlans(t *testing.T) {
	t.Parallel()
	// Not in a synctest bubble: a goroutine blocked on a mutex is not
	// durably blocked there.
	u := newUnit(t, &ServerOptions{IdleTimeout: -1, AckTimeout: -1})
	r := u.reply(context.Background())
	u.c.plan.mu.Lock() // a plan in progress, for as long as the test says
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": r.MessageID(), "code": "card_resync_required",
			"message": "resync", "retryable": true})
		u.accept()
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hi."})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the reader waits for the plan")
	}
	u.c.plan.mu.Unlock()
	u.ft.waitFor(t, func() bool { // the Reply call plans the snapshot and sends it
		snapshots := 0
		for _, m := range u.ft.messages("reply.request") {
			if m["card"].(map[string]any)["mode"] == "snapshot" {
				snapshots++
			}
		}
		return snapshots == 2
	})
	ev, err := r.Next(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "text", ev.Text, "Hi.")
}

// Issue #17: a resynchronisation that cannot succeed (the planner's
// *card.ResyncError, before ErrResyncLoop's bound) names the engine's
// refusal without a second prefix, and both stay reachable.
func TestReply_resyncError(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{IdleTimeout: -1, AckTimeout: -1})
	r := u.reply(context.Background())
	for range maxResyncs + 1 {
		id := r.MessageID()
		n := len(u.ft.messages("reply.request"))
		u.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": id, "code": "card_resync_required",
			"message": "again", "retryable": true})
		select { // the Reply call resends, or the last resync fails it
		case <-r.Done():
		case <-u.sentAfter("reply.request", n):
		}
	}
	_, err := r.Wait(context.Background())
	var re *card.ResyncError
	testutil.ErrorAs(t, err, &re)
	testutil.ErrorIs(t, err, ErrCardResyncRequired)
	testutil.Equal(t, "prefixes", strings.Count(err.Error(), "rpengine: ")+strings.Count(err.Error(), "card: "), 2)
}

// lockProbe is a slog.Handler that, for every record, tries the lock of
// the reply it watches: a library lock held around the game's Logger is
// a lock the game's code can deadlock on.
type lockProbe struct {
	r    atomic.Pointer[Reply]
	mu   sync.Mutex
	held []string // messages logged while the reply's lock was held
}

func (p *lockProbe) Enabled(context.Context, slog.Level) bool { return true }
func (p *lockProbe) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *lockProbe) WithGroup(string) slog.Handler            { return p }
func (p *lockProbe) Handle(_ context.Context, rec slog.Record) error {
	r := p.r.Load()
	if r == nil {
		return nil
	}
	if !r.mu.TryLock() {
		p.mu.Lock()
		p.held = append(p.held, rec.Message)
		p.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	return nil
}

// Issue #30: a stream anomaly was logged from inside the reply's lock
// (Reply.drainLocked), and so were file mode's totals anomalies; the
// game's Logger is called with no library lock held.
func TestReply_logsWithoutItsLock(t *testing.T) {
	t.Parallel()
	probe := &lockProbe{}
	u := newUnit(t, &ServerOptions{IdleTimeout: -1, AckTimeout: -1, Logger: slog.New(probe)})
	r := u.reply(context.Background())
	probe.r.Store(r)
	u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hi"})
	u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Ho"}) // a conflicting delta: an anomaly
	u.in("reply.completed", map[string]any{"requestId": "r1"})
	_, err := r.Wait(context.Background())
	testutil.Success(t, err)
	probe.mu.Lock()
	defer probe.mu.Unlock()
	testutil.Equal(t, "lines logged under the reply's lock", probe.held, []string(nil))
}
