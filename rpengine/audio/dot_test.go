package audio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestDot_kernelsAgree checks the assembly kernel (when the CPU has it)
// against the pure-Go reference on random vectors of every padded length
// the resampler uses.
func TestDot_kernelsAgree(t *testing.T) {
	t.Parallel()
	if !hasAVX2 {
		t.Skip("no assembly kernel on this CPU or build; the pure-Go kernel is the only one")
	}
	seed := uint64(42)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for n := 8; n <= 1024; n += 8 {
		a, b := make([]float32, n), make([]float32, n+5)
		var scale float64
		for i := range a {
			a[i], b[i] = rng.Float32()*2-1, rng.Float32()*2-1
			scale += math.Abs(float64(a[i] * b[i]))
		}
		g, s := dotGeneric(a, b), dotAVX2(a, b)
		if d := math.Abs(float64(g - s)); d > 1e-6*scale {
			t.Fatalf("n=%d: generic %v, assembly %v (diff %g, scale %g)", n, g, s, d, scale)
		}
	}
}

// TestResampler_kernelsAgree runs whole conversions with both kernels.
func TestResampler_kernelsAgree(t *testing.T) {
	t.Parallel()
	for _, p := range []ratePair{{48000, 16000}, {44100, 16000}, {44100, 48000}, {44100, 16001}} {
		x := sine(float64(p.in), 1234, 0.9, p.in/20)
		fast, err := NewResampler(p.in, p.out, 1)
		testutil.Success(t, err)
		ref, _ := NewResampler(p.in, p.out, 1)
		ref.dot = kernel(true)
		a, _ := fast.Append(nil, x)
		b, _ := ref.Append(nil, x)
		testutil.Equal(t, "length", len(a), len(b))
		for i := range a {
			if d := math.Abs(float64(a[i] - b[i])); d > 1e-6 {
				t.Fatalf("%d->%d: sample %d differs by %g", p.in, p.out, i, d)
			}
		}
	}
}
