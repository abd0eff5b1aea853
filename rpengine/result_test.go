package rpengine_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// Issue #33: the engine's own times, elapsedMs of reply.text.completed
// and of reply.audio.completed, are in the result. The fake measures them
// on the bubble's clock: every message after the accept waits 10 ms, and
// the speech ends one message after the text.
func TestReply_engineTimes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 10 * time.Millisecond}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, audioReq(testCard(t), "hi"))
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		if res.TextElapsed <= 0 || res.SpeechElapsed != res.TextElapsed+10*time.Millisecond {
			t.Errorf("text %v, speech %v: want the speech 10 ms after a text that took time", res.TextElapsed, res.SpeechElapsed)
		}
		r, err = f.srv.Reply(ctx, textReq(testCard(t), "hi"))
		testutil.Success(t, err)
		res, err = r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "no speech, no speech time", res.SpeechElapsed, time.Duration(0))
	})
}

// Issue #31: a voiced reply of 1600 one-word sentences with 10 ms
// segments, which the game reads only once it ended: text coalesces
// though segments come between, and the segments (16 s) are bounded by
// MaxPendingAudio (60 s), not by the 1024 other events. It ended with
// ErrSlowConsumer ("1024 events not consumed").
func TestReply_manySegmentsAndDeltasHeld(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		words := make([]string, 1600)
		for i := range words {
			words[i] = fmt.Sprintf("Word%d.", i)
		}
		f := newServer(t, nil)
		f.dial(t, &enginetest.Options{SecondsPerSentence: 0.01,
			Responder: func(enginetest.Request) enginetest.Script { return enginetest.Script{Sentences: words} }})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, audioReq(testCard(t), "hi"))
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		want := strings.Join(words, " ")
		testutil.Equal(t, "text", res.Text, want)
		var segs, texts int
		var last string
		for ev := range r.Events() {
			switch ev.Kind {
			case rpengine.EventSegment:
				testutil.Equal(t, "segment", ev.Segment.Index, segs)
				segs++
			case rpengine.EventText:
				texts++
				last = ev.Text
			}
		}
		testutil.Equal(t, "segments", segs, len(words))
		testutil.Equal(t, "texts, coalesced", texts, 1)
		testutil.Equal(t, "the whole text", last, want)
	})
}
