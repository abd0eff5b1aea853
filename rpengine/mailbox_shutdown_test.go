package rpengine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// Issue #31, item 4: every run of rpengine-demo --engine sim --mailbox
// logged "renameat ...: file already closed" at exit: Shutdown closed the
// mailbox folder while the session's writer was still writing the ack of
// the last engine message. A game that stops right after a reply logs no
// error: the writes of the session end before the folder is closed.
func TestMailbox_shutdownAfterReply(t *testing.T) {
	t.Parallel()
	for i := range 10 {
		synctest.Test(t, func(t *testing.T) {
			l := newMailboxServer(t, nil, "")
			l.eng = l.dialMailbox(t, nil)
			r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "hello"))
			testutil.Success(t, err)
			_, err = r.Wait(ctxT(t))
			testutil.Success(t, err)
			testutil.Success(t, l.srv.Close())
			if log := l.log.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
				t.Fatalf("run %d: a warning or error at shutdown:\n%s", i, log)
			}
			_ = rpengine.ErrServerClosed
		})
	}
}

// Issue #31, item 9: a game that stopped right after a scripted turn (the
// demo's exit after --say), against an engine that also sent a segment
// whose path lies outside the audio folder, left 4 to 5 engine messages
// unacknowledged and 3 segments unconsumed in 2 runs of 3. A game that
// stops acknowledges every message it processed and gives back every
// segment it read first: the engine, counting what is left, finds
// nothing. The game stops here the moment it has processed the engine's
// last messages (segments of the ended reply, answered at once, a
// capacity.update and a marker), with their acks and answers still
// queued.
func TestMailbox_shutdownLeavesNoLooseEnds(t *testing.T) {
	t.Parallel()
	for i := range 5 {
		synctest.Test(t, func(t *testing.T) {
			lb, marked := &logBuf{}, make(chan struct{}, 1)
			log := slog.New(&onLine{Handler: slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}),
				match: `type=test.marker`, seen: marked})
			l := newMailboxServer(t, &rpengine.ServerOptions{Logger: log}, "")
			eng := l.dialMailbox(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 20 * time.Millisecond}})
			ctx := ctxT(t)
			req := audioReq(testCard(t), "hello there")
			req.RequestID = "turn"
			r, err := l.srv.Reply(ctx, req)
			testutil.Success(t, err)
			_, err = eng.Send(ctx, "reply.audio.segment", outsideSegment(eng, req.RequestID, 9, 31)) // while it streams
			testutil.Success(t, err)
			_, err = r.Wait(ctx)
			testutil.Success(t, err)
			for k := range 8 {
				_, err = eng.Send(ctx, "reply.audio.segment", outsideSegment(eng, req.RequestID, 10+k, 20+k))
				testutil.Success(t, err)
			}
			_, err = eng.Send(ctx, "capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
			testutil.Success(t, err)
			_, err = eng.Send(ctx, "test.marker", map[string]any{})
			testutil.Success(t, err)
			<-marked
			testutil.Success(t, l.srv.Close())
			le := eng.LooseEnds()
			testutil.Equal(t, fmt.Sprintf("run %d: engine messages left unacknowledged", i), le.Unacked, []string(nil))
			testutil.Equal(t, fmt.Sprintf("run %d: segments left unconsumed", i), le.Unconsumed, []int(nil))
		})
	}
}

// outsideSegment is a reply.audio.segment of slot whose path lies outside
// the audio folder: refused, and still given back.
func outsideSegment(eng *enginetest.Engine, requestID string, seq, slot int) map[string]any {
	return map[string]any{"requestId": requestID, "segmentSequence": seq, "spokenText": "elsewhere", "slotIndex": slot,
		"path": "../elsewhere.wav", "format": "wav_pcm_s16le", "sampleRate": 44100, "channels": 1,
		"durationSeconds": 0.5, "byteLength": 44144, "peerInstanceId": eng.PeerInstanceID()}
}

// onLine is a slog.Handler that signals seen (without blocking) at each
// line whose text contains match, as the game's Logger sees it: on the
// goroutine that logs, the session's driver for the session's lines.
type onLine struct {
	slog.Handler
	match string
	seen  chan struct{}
}

func (h *onLine) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	if strings.Contains(b.String(), h.match) {
		select {
		case h.seen <- struct{}{}:
		default:
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *onLine) WithAttrs(as []slog.Attr) slog.Handler {
	return &onLine{Handler: h.Handler.WithAttrs(as), match: h.match, seen: h.seen}
}
