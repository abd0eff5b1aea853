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

// TestResampler_foldedKernel checks which kernel filters: the folded one
// exactly when the pure-Go kernel runs a one-phase filter.
func TestResampler_foldedKernel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, out int
		generic bool
		want    bool
	}{
		{48000, 16000, true, true},
		{48000, 16000, false, !hasDotsAsm},
		{44100, 16000, true, false},
		{16000, 48000, true, false},
	} {
		r, err := NewResampler(c.in, c.out, 1)
		testutil.Success(t, err)
		r.setKernel(c.generic)
		testutil.Equal(t, fmt.Sprintf("%d-%d generic=%v folds", c.in, c.out, c.generic), r.fold, c.want)
	}
}
