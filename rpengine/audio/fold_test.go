package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestFold_agreesWithRow checks the folded rows of integer decimations
// against the plain row: the design is symmetric and m-th-band (exact
// zeros every m taps from the centre), and the folded kernel gives the
// plain pure-Go kernel's outputs to float32 precision, the same bits for
// an output alone or in a batch of four. Issue #24.
func TestFold_agreesWithRow(t *testing.T) {
	t.Parallel()
	for _, p := range []ratePair{{48000, 16000}, {32000, 16000}, {64000, 16000}, {96000, 16000}, {24000, 8000}, {44100, 14700}} {
		t.Run(fmt.Sprintf("%d-%d", p.in, p.out), func(t *testing.T) {
			t.Parallel()
			r, err := NewResampler(p.in, p.out, 1)
			testutil.Success(t, err)
			testutil.Equal(t, "one phase", r.l, 1)
			f := r.folded
			if f == nil {
				t.Fatal("no folded row for a one-phase filter")
			}
			testutil.Equal(t, "3:1 pattern", f.third, r.m == 3)
			row, c := r.coef, r.taps/2-1
			for q := 0; q <= 2*c; q++ {
				if row[q] != row[2*c-q] {
					t.Fatalf("row[%d] = %v, row[%d] = %v: not symmetric", q, row[q], 2*c-q, row[2*c-q])
				}
				if (q-c)%r.m == 0 && q != c && row[q] != 0 {
					t.Fatalf("row[%d] = %v, %d taps from the centre: want exactly 0", q, row[q], q-c)
				}
			}

			seed := uint64(p.in + p.out)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 5))
			buf := make([]float32, r.taps+64*r.m)
			for i := range buf {
				buf[i] = rng.Float32()*2 - 1
			}
			// Windows at the decimation's stride, as plan lays them out,
			// then a batch at another stride (the 3:1 kernel's fallback).
			var wins []int32
			for k := range 17 {
				wins = append(wins, int32(k*r.m))
			}
			wins = append(wins, 60*int32(r.m), 60*int32(r.m)+1, 60*int32(r.m)+2, 61*int32(r.m), 62*int32(r.m))
			rows := make([]int32, len(wins))
			got, want := make([]float32, len(wins)), make([]float32, len(wins))
			f.dots(got, 1, buf, wins)
			dotsGeneric(want, 1, row, r.taps, buf, rows, wins)
			for k, w := range wins {
				var scale float64
				for i := range r.taps {
					scale += math.Abs(float64(row[i] * buf[int(w)+i]))
				}
				if d := math.Abs(float64(got[k] - want[k])); d > 1e-6*scale {
					t.Fatalf("window %d: folded %v, plain %v (diff %g, scale %g)", k, got[k], want[k], d, scale)
				}
				var one [1]float32
				f.dots(one[:], 1, buf, wins[k:k+1])
				if math.Float32bits(one[0]) != math.Float32bits(got[k]) {
					t.Fatalf("window %d: %v in a batch, %v alone", k, got[k], one[0])
				}
			}
		})
	}
}

// TestResampler_foldedKernel checks which kernel filters: the pure-Go
// folded one exactly when the pure-Go kernel runs a one-phase filter, the
// AVX2 folded one exactly when the AVX2 kernel does (issue #24).
func TestResampler_foldedKernel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, out int
		generic bool
		want    bool
		wantAsm bool
	}{
		{48000, 16000, true, true, false},
		{48000, 16000, false, !hasDotsAsm, hasFoldAsm},
		{32000, 16000, false, !hasDotsAsm, hasFoldAsm},
		{44100, 16000, true, false, false},
		{44100, 16000, false, false, false},
		{16000, 48000, true, false, false},
	} {
		r, err := NewResampler(c.in, c.out, 1)
		testutil.Success(t, err)
		r.setKernel(c.generic)
		testutil.Equal(t, fmt.Sprintf("%d-%d generic=%v folds", c.in, c.out, c.generic), r.fold, c.want)
		testutil.Equal(t, fmt.Sprintf("%d-%d generic=%v folds in assembly", c.in, c.out, c.generic), r.foldAsm, c.wantAsm)
	}
}

// TestFold_asmAgreesWithGo checks the folded AVX2 kernel against the
// pure-Go folded kernel on random symmetric rows (some with the zeros of
// a third-band filter) and random windows and batches: the same outputs
// to float32 precision, nothing written between outputs, and an output
// with the same bits alone as in its batch (the resampler's output must
// not depend on how its input is cut). Issue #24.
func TestFold_asmAgreesWithGo(t *testing.T) {
	t.Parallel()
	if !hasFoldAsm {
		t.Skip("no folded assembly kernel on this CPU or build")
	}
	seed := uint64(2024)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	r, err := NewResampler(48000, 16000, 1)
	testutil.Success(t, err)
	type rowM struct {
		row []float32
		m   int // the decimation the row is for (3: third-band zeros)
	}
	rows := []rowM{{r.coef, 3}}
	for taps := 16; taps <= 1024; taps += 8 { // every length the kernel takes (issue #30)
		for m := 2; m <= 3; m++ {
			rows = append(rows, rowM{randomSymmetricRow(rng, taps, m == 3), m})
		}
	}
	for i, rm := range rows {
		row := rm.row
		f := foldRow(row, rm.m)
		if f == nil || f.wide == nil {
			t.Fatalf("row %d (%d taps): no wide form", i, len(row))
		}
		taps := len(row)
		buf := make([]float32, 3*taps+40)
		for j := range buf {
			buf[j] = rng.Float32()*2 - 1
		}
		n := 1 + rng.IntN(13)
		wins := make([]int32, n)
		step := rng.IntN(4) // 0: random windows; else windows step apart
		for k := range wins {
			if step == 0 {
				wins[k] = int32(rng.IntN(len(buf) - taps + 1))
			} else {
				wins[k] = int32(k * step)
			}
		}
		const stride = 2
		got, want := make([]float32, n*stride), make([]float32, n*stride)
		f.dotsAsm(got, stride, buf, wins)
		f.dots(want, stride, buf, wins)
		for k, w := range wins {
			var scale float64
			for q := range taps {
				scale += math.Abs(float64(row[q] * buf[int(w)+q]))
			}
			g, wv := got[k*stride], want[k*stride]
			if d := math.Abs(float64(g - wv)); d > 1e-6*scale {
				t.Fatalf("row %d (%d taps) output %d: AVX2 %v, Go %v (diff %g, scale %g)", i, taps, k, g, wv, d, scale)
			}
			var one [1]float32
			f.dotsAsm(one[:], 1, buf, wins[k:k+1])
			if math.Float32bits(one[0]) != math.Float32bits(g) {
				t.Fatalf("row %d (%d taps) output %d: %v in a batch, %v alone", i, taps, k, g, one[0])
			}
		}
		for j := range got {
			if j%stride != 0 && got[j] != 0 {
				t.Fatalf("row %d: the kernel wrote out[%d], between outputs", i, j)
			}
		}
	}
}

// randomSymmetricRow returns a row of taps coefficients symmetric as
// design makes them (row[q] == row[taps-2-q], row[taps-1] alone), with
// the zeros of a third-band filter every third tap from the centre when
// third is set.
func randomSymmetricRow(rng *rand.Rand, taps int, third bool) []float32 {
	row := make([]float32, taps)
	s, c := taps-2, taps/2-1
	for q := 0; q <= c; q++ {
		v := rng.Float32()*2 - 1
		if third && q != c && (c-q)%3 == 0 {
			v = 0
		}
		row[q], row[s-q] = v, v
	}
	row[taps-1] = rng.Float32()*2 - 1
	return row
}
