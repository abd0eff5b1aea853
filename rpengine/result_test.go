package rpengine_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
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
