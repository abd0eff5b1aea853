package audio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// syllables returns speech-like audio: voiced 120 Hz "vowels" rich in
// harmonics, 4 per second, separated by quiet noisy gaps.
func syllables(rate int, seconds float64, seed uint64) (x []float32, voiced func(i int) bool) {
	rng := rand.New(rand.NewPCG(seed, 9))
	n := int(seconds * float64(rate))
	period := rate / 4
	voiced = func(i int) bool { return i%period < period/2 }
	x = make([]float32, n)
	for i := range x {
		t := float64(i) / float64(rate)
		if voiced(i) {
			var v float64
			for h := 1; h <= 8; h++ {
				v += math.Sin(2*math.Pi*120*float64(h)*t) / float64(h)
			}
			x[i] = float32(0.15 * v)
		} else {
			x[i] = float32(0.001 * (rng.Float64()*2 - 1))
		}
	}
	return x, voiced
}

func TestLipSync_followsSyllables(t *testing.T) {
	t.Parallel()
	const rate = 44100
	seed := uint64(7)
	t.Logf("seed %d", seed)
	x, voiced := syllables(rate, 2, seed)
	l := NewLipSync(rate)
	chunk := rate / 100 // a 10 ms device period
	var openV, openG []float32
	for i := 0; i+chunk <= len(x); i += chunk {
		l.Push(x[i : i+chunk])
		o := l.Openness()
		if o < 0 || o > 1 {
			t.Fatalf("openness %v outside 0..1", o)
		}
		end := i + chunk - 1
		phase := end % (rate / 4)
		switch {
		case voiced(end) && phase > rate/16: // well inside a vowel
			openV = append(openV, o)
		case !voiced(end) && phase > rate/4-rate/32: // end of a gap
			openG = append(openG, o)
		}
	}
	minV, maxG := float32(1), float32(0)
	for _, o := range openV {
		minV = min(minV, o)
	}
	for _, o := range openG {
		maxG = max(maxG, o)
	}
	t.Logf("mouth: >= %.2f inside vowels, <= %.2f at the end of gaps", minV, maxG)
	if minV < 0.7 || maxG > 0.3 {
		t.Errorf("mouth does not follow the syllables: vowels >= %.2f, gaps <= %.2f", minV, maxG)
	}
}

func TestLipSync_levels(t *testing.T) {
	t.Parallel()
	open := func(amp float64) float32 {
		l := NewLipSync(16000)
		l.Push(sine(16000, 200, amp, 16000))
		return l.Openness()
	}
	testutil.Equal(t, "silence", open(0), float32(0))
	if o := open(0.001); o != 0 {
		t.Errorf("-63 dBFS tone opens the mouth to %v", o)
	}
	if o := open(0.5); o < 0.999 {
		t.Errorf("loud tone opens the mouth to %v, want 1", o)
	}
	prev := float32(-1)
	for _, a := range []float64{0.005, 0.01, 0.02, 0.05, 0.1} {
		o := open(a)
		if o <= prev {
			t.Errorf("openness %v at amplitude %v is not above %v", o, a, prev)
		}
		prev = o
	}
	l := NewLipSync(16000)
	l.Push(sine(16000, 200, 0.5, 1600))
	l.Reset()
	testutil.Equal(t, "after reset", l.Openness(), float32(0))
}
