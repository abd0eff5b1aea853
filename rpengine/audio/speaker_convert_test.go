package audio

import (
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestSpeaker_rateChanges plays a reply whose segments come at 44.1 kHz,
// then 16 kHz, then the device's 48 kHz: each rate's frames are its
// resampler's exact output, tail included, followed by the next rate's,
// and the 48 kHz segment plays as it is. The speaker converts as it plays
// (issue #24); the frames are those of converting each run whole.
func TestSpeaker_rateChanges(t *testing.T) {
	t.Parallel()
	d, f := newTestDevice(t, 48000, 1)
	p := newTestSpeaker(t, d, &SpeakerOptions{Fade: -1})
	a, b, c := speech(5000), speech(3000)[:1600], speech(2400)
	testutil.Success(t, p.Enqueue("r", seg(0, 44100, a[:3000])))
	testutil.Success(t, p.Enqueue("r", seg(1, 44100, a[3000:])))
	testutil.Success(t, p.Enqueue("r", seg(2, 16000, b)))
	testutil.Success(t, p.Enqueue("r", seg(3, 48000, c)))
	testutil.Success(t, p.End("r"))
	wa, _ := resampled(t, a, 44100, 48000)
	wb, _ := resampled(t, b, 16000, 48000)
	want := append(append(wa, wb...), AppendFloat32(nil, c)...)
	got := render(f, len(want)+960, 480, 97, 1)
	testutil.Equal(t, "frames", got[:len(want)], want)
	for i, v := range got[len(want):] {
		if v != 0 {
			t.Fatalf("frame %d after the reply is %v", i, v)
		}
	}
	pos, _ := p.Heard("r")
	testutil.Equal(t, "heard", pos.Heard, time.Duration(len(want))*time.Second/48000)
	testutil.Equal(t, "done", pos.Done, true)
	testutil.Equal(t, "queued", p.Stats().Queued, time.Duration(0))
}

// TestSpeaker_interruptResampled checks that a reply cut by Interrupt
// leaves nothing in the resampler for the next one: both when the cut
// reply is still playing and when it played out without an End. The next
// reply's frames are a fresh resampler's.
func TestSpeaker_interruptResampled(t *testing.T) {
	t.Parallel()
	next := speech(4410)
	want, _ := resampled(t, next, 44100, 48000)
	for _, playedOut := range []bool{false, true} {
		d, f := newTestDevice(t, 48000, 1)
		p := newTestSpeaker(t, d, &SpeakerOptions{Fade: -1})
		testutil.Success(t, p.Enqueue("a", seg(0, 44100, speech(8820))))
		if playedOut {
			render(f, 12000, 480) // all of it, and no End
		} else {
			render(f, 2000, 480)
		}
		p.Interrupt()
		testutil.Success(t, p.Enqueue("b", seg(0, 44100, next)))
		testutil.Success(t, p.End("b"))
		got := render(f, len(want)+480, 480)
		testutil.Equal(t, "the next reply's frames", got[:len(want)], want)
		a, _ := p.Heard("a")
		testutil.Equal(t, "a interrupted", a.Interrupted, !playedOut)
		pb, _ := p.Heard("b")
		testutil.Equal(t, "b done", pb.Done, true)
	}
}

// TestSpeaker_enqueueCopies pins what Enqueue of a segment to resample
// does: one allocation, its copy as float32. It resampled the segment
// into a second buffer before (issue #24), which delayed its first frame
// by the time it took to resample all of it.
func TestSpeaker_enqueueCopies(t *testing.T) {
	testutil.SkipAllocs(t)
	d, f := newTestDevice(t, 48000, 2)
	p := newTestSpeaker(t, d, &SpeakerOptions{MaxQueued: time.Hour, MaxSegments: 1024})
	sg := seg(0, 44100, speech(44100))
	testutil.Success(t, p.Enqueue("r", sg)) // makes the resampler
	testutil.Equal(t, "allocations", testing.AllocsPerRun(100, func() {
		if err := p.Enqueue("r", sg); err != nil {
			t.Fatal(err)
		}
	}), 1.0)
	testutil.Equal(t, "queued", p.Stats().Queued, 102*time.Second) // AllocsPerRun runs once more
	f.pull(480)
}
