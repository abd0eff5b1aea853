package audio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestDots_kernelsAgree checks the assembly kernel (AVX2 on amd64)
// against the pure-Go reference on random batches of every padded length
// the resampler uses, with interleaved outputs.
func TestDots_kernelsAgree(t *testing.T) {
	t.Parallel()
	if !hasDotsAsm {
		t.Skip("no assembly kernel on this CPU or build; the pure-Go kernel is the only one")
	}
	seed := uint64(42)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for taps := 8; taps <= 1024; taps += 8 {
		coef, buf := make([]float32, 3*taps+5), make([]float32, 4*taps)
		for i := range coef {
			coef[i] = rng.Float32()*2 - 1
		}
		for i := range buf {
			buf[i] = rng.Float32()*2 - 1
		}
		n := 1 + rng.IntN(9)
		rows, wins := make([]int32, n), make([]int32, n)
		for k := range rows {
			rows[k] = int32(rng.IntN(len(coef) - taps + 1))
			wins[k] = int32(rng.IntN(len(buf) - taps + 1))
			if k > 0 && rng.IntN(3) == 0 {
				rows[k] = rows[k-1] // one phase, as at 48 to 16 kHz
			}
		}
		const stride = 3
		got, want := make([]float32, n*stride), make([]float32, n*stride)
		checkDots(got, stride, coef, taps, buf, rows, wins)
		dotsAsm(got, stride, coef, taps, buf, rows, wins)
		dotsGeneric(want, stride, coef, taps, buf, rows, wins)
		for k := range rows {
			var scale float64
			for i := range taps {
				scale += math.Abs(float64(coef[int(rows[k])+i] * buf[int(wins[k])+i]))
			}
			g, w := got[k*stride], want[k*stride]
			if d := math.Abs(float64(g - w)); d > 1e-6*scale {
				t.Fatalf("taps=%d output %d: assembly %v, generic %v (diff %g, scale %g)", taps, k, g, w, d, scale)
			}
		}
		for i := range got {
			if i%stride != 0 && got[i] != 0 {
				t.Fatalf("taps=%d: the kernel wrote out[%d], between outputs", taps, i)
			}
		}
		// An output is the same bits however the batch around it is made
		// (the AVX2 kernel takes outputs in pairs): the resampler's output
		// must not depend on how its input is chunked.
		for k := range rows {
			var one [1]float32
			dotsAsm(one[:], 1, coef, taps, buf, rows[k:k+1], wins[k:k+1])
			if math.Float32bits(one[0]) != math.Float32bits(got[k*stride]) {
				t.Fatalf("taps=%d output %d: %v in a batch, %v alone", taps, k, got[k*stride], one[0])
			}
		}
	}
}

// TestResampler_kernelsAgree runs whole conversions with both kernels,
// exact and interpolated phases, mono and stereo.
func TestResampler_kernelsAgree(t *testing.T) {
	t.Parallel()
	for _, p := range []ratePair{{48000, 16000}, {44100, 16000}, {44100, 48000}, {44100, 16001}} {
		for _, ch := range []int{1, 2} {
			x := sine(float64(p.in), 1234, 0.9, ch*p.in/20)
			fast, err := NewResampler(p.in, p.out, ch)
			testutil.Success(t, err)
			ref, _ := NewResampler(p.in, p.out, ch)
			ref.setKernel(true)
			a, _ := fast.Append(nil, x)
			b, _ := ref.Append(nil, x)
			testutil.Equal(t, "length", len(a), len(b))
			for i := range a {
				if d := math.Abs(float64(a[i] - b[i])); d > 1e-6 {
					t.Fatalf("%d->%d, %d channels: sample %d differs by %g", p.in, p.out, ch, i, d)
				}
			}
		}
	}
}

// Test_checkDots checks that a batch reaching outside its slices is
// refused before an assembly kernel (which does not check) reads it.
func Test_checkDots(t *testing.T) {
	t.Parallel()
	coef, buf, out := make([]float32, 16), make([]float32, 16), make([]float32, 4)
	ok := func(rows, wins []int32, taps, stride int) (fine bool) {
		defer func() { fine = recover() == nil }()
		checkDots(out, stride, coef, taps, buf, rows, wins)
		return
	}
	testutil.Equal(t, "in range", ok([]int32{0, 8}, []int32{8, 0}, 8, 2), true)
	testutil.Equal(t, "row past the end", ok([]int32{9}, []int32{0}, 8, 1), false)
	testutil.Equal(t, "window past the end", ok([]int32{0}, []int32{9}, 8, 1), false)
	testutil.Equal(t, "negative row", ok([]int32{-1}, []int32{0}, 8, 1), false)
	testutil.Equal(t, "taps not a multiple of 8", ok([]int32{0}, []int32{0}, 12, 1), false)
	testutil.Equal(t, "output past the end", ok([]int32{0, 0}, []int32{0, 0}, 8, 4), false)
	testutil.Equal(t, "rows and windows differ", ok([]int32{0}, []int32{0, 0}, 8, 1), false)
}

// checkDots panics unless a batch is within its slices: the contract of
// dotsFunc, which the assembly kernels do not check (the resampler checks
// its own batches with checkPlan).
func checkDots(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	if taps <= 0 || taps%8 != 0 || len(rows) != len(wins) || (len(rows) > 0 && (len(rows)-1)*stride >= len(out)) {
		panic("audio: bad dot-product batch")
	}
	for k := range rows {
		if rows[k] < 0 || int(rows[k])+taps > len(coef) || wins[k] < 0 || int(wins[k])+taps > len(buf) {
			panic("audio: dot-product batch out of range")
		}
	}
}
