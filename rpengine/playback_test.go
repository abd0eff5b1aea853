package rpengine_test

import (
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// Issue #17: playing a reply's speech is two lines of the event loop,
// Enqueue on EventSegment and End on EventAudioEnd, and it ends cleanly:
// through audio's Mixer (pure Go, no device), every sample of the reply
// is played, with the resampler's tail and no underrun, and the speaker
// says Done. Without a mark of the speech's end the last 1.8 ms never
// played and Done never came.
func TestReply_playsThroughMixer(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: 48000})
		testutil.Success(t, err)
		defer mix.Close()
		sp, err := mix.NewSpeaker(nil)
		testutil.Success(t, err)
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, audioReq(testCard(t), "hello"))
		testutil.Success(t, err)
		received, rate, ends := 0, 0, 0
		for ev := range r.Events() {
			switch ev.Kind {
			case rpengine.EventSegment:
				testutil.Success(t, sp.Enqueue(r.RequestID(), ev.Segment))
				received += len(ev.Segment.Samples)
				rate = ev.Segment.SampleRate
			case rpengine.EventAudioEnd:
				testutil.Success(t, sp.End(r.RequestID()))
				ends++
			case rpengine.EventEnd:
				testutil.Success(t, ev.Err)
				testutil.Equal(t, "the speech ended before the reply", ends, 1)
			}
		}
		testutil.Equal(t, "speech received", received > 0 && rate == 44100, true)
		buf := make([]byte, 4*480) // 10 ms of 48 kHz stereo s16
		var pos audio.Position
		for i := 0; i < 10000; i++ { // 100 s of reads at most
			_, err := mix.Read(buf)
			testutil.Success(t, err)
			var ok bool
			if pos, ok = sp.Heard(r.RequestID()); ok && pos.Done {
				break
			}
		}
		testutil.Equal(t, "done", pos.Done, true)
		want := time.Duration(received) * time.Second / time.Duration(rate)
		if pos.Heard < want || pos.Heard > want+2*time.Millisecond { // the resampler's tail, under 2 ms
			t.Errorf("heard %v of a %v reply", pos.Heard, want)
		}
		testutil.Equal(t, "underruns", sp.Stats().Underruns, int64(0))
	})
}
