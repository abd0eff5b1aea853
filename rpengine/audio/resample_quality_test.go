package audio

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// The quality tests measure the resampler (bench/quality.go has the
// same harness for every resampler): steady tones fitted by least squares (gain, THD+N),
// RMS ratios for alias rejection, the impulse peak for delay. Signals are
// short (tens of ms) so the whole suite stays fast under -race.

func sine(rate, f, amp float64, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*f*float64(i)/rate+0.3))
	}
	return x
}

// resampleChunked pushes x through a new resampler in chunks of chunk
// frames and returns the concatenated output.
func resampleChunked(tb testing.TB, in, out, channels int, x []float32, chunk int) []float32 {
	tb.Helper()
	r, err := NewResampler(in, out, channels)
	testutil.Success(tb, err)
	var y []float32
	for len(x) > 0 {
		n := min(chunk*channels, len(x))
		y, err = r.Append(y, x[:n])
		testutil.Success(tb, err)
		x = x[n:]
	}
	return y
}

// fitSine fits a*cos + b*sin + c at frequency f to y by least squares and
// returns the fitted amplitude and the RMS of the residual.
func fitSine(y []float32, f, rate float64) (amp, residual float64) {
	var m [3][3]float64
	var v [3]float64
	w := 2 * math.Pi * f / rate
	for i, s := range y {
		b := [3]float64{math.Cos(w * float64(i)), math.Sin(w * float64(i)), 1}
		for j := range 3 {
			for k := range 3 {
				m[j][k] += b[j] * b[k]
			}
			v[j] += b[j] * float64(s)
		}
	}
	p := solve3(m, v)
	var e float64
	for i, s := range y {
		d := float64(s) - p[0]*math.Cos(w*float64(i)) - p[1]*math.Sin(w*float64(i)) - p[2]
		e += d * d
	}
	return math.Hypot(p[0], p[1]), math.Sqrt(e / float64(len(y)))
}

func solve3(m [3][3]float64, v [3]float64) [3]float64 {
	for c := range 3 { // Gaussian elimination with partial pivoting
		p := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p], v[c], v[p] = m[p], m[c], v[p], v[c]
		for r := c + 1; r < 3; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k < 3; k++ {
				m[r][k] -= f * m[c][k]
			}
			v[r] -= f * v[c]
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := v[r]
		for k := r + 1; k < 3; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x
}

func rms(y []float32) float64 {
	var s float64
	for _, v := range y {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(y)))
}

func db(x float64) float64 { return 20 * math.Log10(x) }

// steady returns the part of a resampler's output that is past the
// start-up transient.
func steady(tb testing.TB, y []float32, in, out int) []float32 {
	tb.Helper()
	r, err := NewResampler(in, out, 1)
	testutil.Success(tb, err)
	skip := int(float64(r.taps)*float64(out)/float64(in)) + 4
	return y[skip:]
}

type ratePair struct{ in, out int }

var downPairs = []ratePair{{48000, 16000}, {44100, 16000}, {32000, 16000}, {22050, 16000}}

// Thresholds from issue 5.
const (
	minAliasRejectionDB = 107
	maxPassbandDevDB    = 0.1
	passbandEdgeHz      = 6000
	minMinus3dBHz       = 7400
	minTHDNdB           = 100
	maxDelay            = 3500 * time.Microsecond
)

func TestResampler_aliasRejection(t *testing.T) {
	t.Parallel()
	for _, p := range downPairs {
		t.Run(fmt.Sprintf("%d-%d", p.in, p.out), func(t *testing.T) {
			t.Parallel()
			worst, worstF := math.Inf(1), 0.0
			n := p.in / 40 // 25 ms tones
			for f := 9000.0; f < float64(p.in)/2-50; f += stepFor(f) {
				x := sine(float64(p.in), f, 0.5, n)
				y := steady(t, resampleChunked(t, p.in, p.out, 1, x, 97), p.in, p.out)
				rej := db(rms(x) / rms(y))
				if rej < worst {
					worst, worstF = rej, f
				}
			}
			t.Logf("worst-case alias rejection %.1f dB at %.0f Hz", worst, worstF)
			if worst < minAliasRejectionDB {
				t.Errorf("alias rejection %.1f dB at %.0f Hz, want >= %d dB", worst, worstF, minAliasRejectionDB)
			}
		})
	}
}

// stepFor samples the stop band densely near its edge, where the filter's
// side lobes are highest, and sparsely above.
func stepFor(f float64) float64 {
	if f < 10000 {
		return 50
	}
	return 250
}

func TestResampler_passband(t *testing.T) {
	t.Parallel()
	for _, p := range downPairs {
		t.Run(fmt.Sprintf("%d-%d", p.in, p.out), func(t *testing.T) {
			t.Parallel()
			n := p.in / 20
			gain := func(f float64) float64 {
				x := sine(float64(p.in), f, 0.5, n)
				y := steady(t, resampleChunked(t, p.in, p.out, 1, x, 441), p.in, p.out)
				a, _ := fitSine(y, f, float64(p.out))
				return db(a / 0.5)
			}
			var dev float64
			for _, f := range []float64{100, 300, 1000, 2000, 3000, 4000, 5000, 5500, 6000} {
				dev = max(dev, math.Abs(gain(f)))
			}
			g := gain(minMinus3dBHz)
			t.Logf("passband deviation to %d Hz %.4f dB; gain at %d Hz %.2f dB", passbandEdgeHz, dev, minMinus3dBHz, g)
			if dev > maxPassbandDevDB {
				t.Errorf("passband deviation %.4f dB, want <= %.2f", dev, maxPassbandDevDB)
			}
			if g < -3 {
				t.Errorf("gain at %d Hz is %.2f dB, want >= -3 dB", minMinus3dBHz, g)
			}
		})
	}
}

func TestResampler_thdn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ratePair
		freqs []float64
	}{
		{ratePair{48000, 16000}, []float64{1000}},
		{ratePair{44100, 16000}, []float64{1000}},
		{ratePair{32000, 16000}, []float64{1000}},
		{ratePair{22050, 16000}, []float64{1000}},
		{ratePair{44100, 48000}, []float64{1000, 5000, 10000, 15000}},
		{ratePair{16000, 44100}, []float64{1000}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%d", c.in, c.out), func(t *testing.T) {
			t.Parallel()
			for _, f := range c.freqs {
				amp := 0.5 // -6 dBFS
				x := sine(float64(c.in), f, amp, c.in/10)
				y := steady(t, resampleChunked(t, c.in, c.out, 1, x, 97), c.in, c.out)
				a, e := fitSine(y, f, float64(c.out))
				thdn := db(a / math.Sqrt2 / e)
				t.Logf("%.0f Hz: THD+N %.1f dB, gain %.4f dB", f, thdn, db(a/amp))
				if thdn < minTHDNdB {
					t.Errorf("%.0f Hz: THD+N %.1f dB, want >= %d dB", f, thdn, minTHDNdB)
				}
			}
		})
	}
}

func TestResampler_delay(t *testing.T) {
	t.Parallel()
	for _, p := range append(downPairs, ratePair{44100, 48000}) {
		t.Run(fmt.Sprintf("%d-%d", p.in, p.out), func(t *testing.T) {
			t.Parallel()
			x := make([]float32, p.in/10)
			at := p.in / 20
			x[at] = 1
			y := resampleChunked(t, p.in, p.out, 1, x, 97)
			peak := 0
			for i, v := range y {
				if math.Abs(float64(v)) > math.Abs(float64(y[peak])) {
					peak = i
				}
			}
			// Parabolic interpolation of the peak for sub-sample precision.
			d := float64(peak)
			if peak > 0 && peak+1 < len(y) {
				a, b, c := float64(y[peak-1]), float64(y[peak]), float64(y[peak+1])
				d += 0.5 * (a - c) / (a - 2*b + c)
			}
			delay := time.Duration((d/float64(p.out) - float64(at)/float64(p.in)) * float64(time.Second))
			r, _ := NewResampler(p.in, p.out, 1)
			t.Logf("measured delay %v, Delay() %v", delay, r.Delay())
			if delay > maxDelay || delay < 0 {
				t.Errorf("delay %v, want 0..%v", delay, maxDelay)
			}
			if diff := delay - r.Delay(); diff > 100*time.Microsecond || diff < -100*time.Microsecond {
				t.Errorf("measured delay %v differs from Delay() %v", delay, r.Delay())
			}
		})
	}
}

// TestResampler_sweep feeds a linear sweep across the whole stop band
// (9 kHz to the input Nyquist frequency): everything must be removed.
func TestResampler_sweep(t *testing.T) {
	t.Parallel()
	for _, p := range append(downPairs, ratePair{192000, 16000}, ratePair{96000, 16000}) {
		t.Run(fmt.Sprintf("%d-%d", p.in, p.out), func(t *testing.T) {
			t.Parallel()
			n := p.in / 5 // 200 ms
			f0, f1 := 9000.0, float64(p.in)/2
			x := make([]float32, n)
			for i := range x {
				tt := float64(i) / float64(p.in)
				ph := 2 * math.Pi * (f0*tt + (f1-f0)*tt*tt/(2*float64(n)/float64(p.in)))
				x[i] = float32(0.5 * math.Sin(ph))
			}
			y := steady(t, resampleChunked(t, p.in, p.out, 1, x, 441), p.in, p.out)
			rej := db(rms(x) / rms(y))
			t.Logf("sweep 9 kHz..%.0f Hz: rejection %.1f dB (RMS over the sweep)", f1, rej)
			if rej < minAliasRejectionDB {
				t.Errorf("sweep rejection %.1f dB, want >= %d", rej, minAliasRejectionDB)
			}
		})
	}
}

// TestResampler_upsamplePassband checks 44.1 -> 48 kHz (playback on a
// 48 kHz device) and 8 -> 16 kHz (the lowest input rate) for flatness.
func TestResampler_upsamplePassband(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ratePair
		edge float64
	}{{ratePair{44100, 48000}, 16000}, {ratePair{8000, 16000}, 3000}, {ratePair{192000, 16000}, 6000}} {
		t.Run(fmt.Sprintf("%d-%d", c.in, c.out), func(t *testing.T) {
			t.Parallel()
			var dev float64
			for _, f := range []float64{100, c.edge / 4, c.edge / 2, c.edge * 3 / 4, c.edge} {
				x := sine(float64(c.in), f, 0.5, c.in/20)
				y := steady(t, resampleChunked(t, c.in, c.out, 1, x, 97), c.in, c.out)
				a, e := fitSine(y, f, float64(c.out))
				dev = max(dev, math.Abs(db(a/0.5)))
				if thdn := db(a / math.Sqrt2 / e); thdn < minTHDNdB {
					t.Errorf("%.0f Hz: THD+N %.1f dB", f, thdn)
				}
			}
			t.Logf("passband deviation to %.0f Hz: %.4f dB", c.edge, dev)
			if dev > maxPassbandDevDB {
				t.Errorf("passband deviation %.4f dB to %.0f Hz", dev, c.edge)
			}
		})
	}
}
