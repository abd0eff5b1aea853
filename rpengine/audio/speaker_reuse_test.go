package audio

import (
	"testing"
)

// A segment's float32 samples reuse those of a slot already played: once
// the queue turns over, Enqueue allocates nothing. Issue #24.
func TestSpeaker_enqueueReusesSamples(t *testing.T) {
	var f *fakeDevice
	d, err := openDevice(&DeviceOptions{SampleRate: 48000, Channels: 2}, fakeOpener(48000, 2, &f))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.NewSpeaker(nil)
	if err != nil {
		t.Fatal(err)
	}
	sg := seg(0, 44100, AppendInt16(nil, sine(44100, 300, 0.5, 4410)))
	cycle := func() {
		if err := s.Enqueue("r", sg); err != nil {
			t.Fatal(err)
		}
		s.Interrupt()
		f.pull(480) // the fade (5 ms), then the drop
	}
	cycle() // the first segment allocates its samples and the resampler
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Errorf("Enqueue of a segment after one was played: %v allocations, want 0", n)
	}
}

// A segment in reused samples plays its own samples, not those of the
// segment that held them before. Issue #24.
func TestSpeaker_reusedSamplesPlayTheNewSegment(t *testing.T) {
	var f *fakeDevice
	d, err := openDevice(&DeviceOptions{SampleRate: 44100, Channels: 1}, fakeOpener(44100, 1, &f))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.NewSpeaker(nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 441
	a, b := make([]int16, n), make([]int16, n)
	for i := range n {
		a[i], b[i] = 8000, int16(i*16-3000)
	}
	if err := s.Enqueue("a", seg(0, 44100, a)); err != nil {
		t.Fatal(err)
	}
	if err := s.End("a"); err != nil {
		t.Fatal(err)
	}
	f.pull(2 * n)                                            // a plays to its end, then silence
	if err := s.Enqueue("b", seg(0, 44100, b)); err != nil { // reclaims a's slot and takes its samples
		t.Fatal(err)
	}
	if len(s.free) != 0 {
		t.Fatalf("%d free sample buffers after Enqueue, want 0 (a's taken for b)", len(s.free))
	}
	out := f.pull(n)
	for i, v := range out {
		if want := float32(b[i]) / 32768; v != want {
			t.Fatalf("frame %d: %v, want %v (b's sample)", i, v, want)
		}
	}
}
