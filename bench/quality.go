package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Converter is a streaming mono resampler under test: Process appends the
// output for src to dst. Close releases C resources.
type Converter interface {
	Process(dst, src []float32) []float32
	Close()
}

// Engine names a resampler and makes converters of it.
type Engine struct {
	Name string
	New  func(inRate, outRate int) (Converter, error)
}

// RefEngines are the C reference resamplers, registered by srcref.go when
// built with -tags srcref (and cgo).
var RefEngines []Engine

// Quality is what MeasureQuality finds: steady tones fitted by least
// squares (gain, THD+N), RMS ratios for alias rejection, the impulse peak
// for delay.
type Quality struct {
	AliasDB   float64 // worst rejection of tones from 9 kHz to the input Nyquist (dB, higher is better)
	Alias10DB float64 // rejection of a 10 kHz tone
	PassDB    float64 // largest gain deviation from 100 Hz to 6 kHz (dB, lower is better)
	THDNDB    float64 // THD+N of a -6 dBFS 1 kHz tone below the tone (dB, higher is better)
	DelayMS   float64 // where an impulse comes out, after where it went in (ms)
	BacklogMS float64 // median output held back after each 10 ms chunk (ms)
}

const (
	chunkMS = 10
	toneAmp = 0.5 // -6 dBFS
)

// runStream runs in through a new converter in 10 ms chunks and returns the
// output and the median backlog: output expected by the rate ratio minus
// output produced, after each chunk.
func runStream(e Engine, inRate, outRate int, in []float32) ([]float32, time.Duration, error) {
	c, err := e.New(inRate, outRate)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	step := inRate * chunkMS / 1000
	out := make([]float32, 0, len(in)*outRate/inRate+outRate)
	var backlog []float64
	for i := 0; i < len(in); i += step {
		out = c.Process(out, in[i:min(i+step, len(in))])
		expected := float64(min(i+step, len(in))) * float64(outRate) / float64(inRate)
		backlog = append(backlog, expected-float64(len(out)))
	}
	slices.Sort(backlog)
	return out, time.Duration(backlog[len(backlog)/2] / float64(outRate) * float64(time.Second)), nil
}

func tone(rate int, freq, seconds float64) []float32 {
	s := make([]float32, int(seconds*float64(rate)))
	for n := range s {
		s[n] = float32(toneAmp * math.Sin(2*math.Pi*freq*float64(n)/float64(rate)))
	}
	return s
}

// Noise returns seconds of uniform noise at rate (fixed seed), the speed
// test input.
func Noise(rate int, seconds float64) []float32 {
	r := rand.New(rand.NewPCG(7, 7))
	s := make([]float32, int(seconds*float64(rate)))
	for i := range s {
		s[i] = float32(r.Float64()*2-1) * 0.5
	}
	return s
}

func rms(s []float32) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// steady trims the first 100 ms and last 50 ms of a tone's output, where
// the filter starts and the converter may hold samples back.
func steady(out []float32, rate int) []float32 {
	a, b := rate/10, len(out)-rate/20
	if b <= a {
		return nil
	}
	return out[a:b]
}

// fitSine fits a·cos(wn) + b·sin(wn) + c to y by least squares and returns
// the amplitude and the RMS of the residual.
func fitSine(y []float32, w float64) (amp, resid float64) {
	var m [3][4]float64
	for n, v := range y {
		x := [3]float64{math.Cos(w * float64(n)), math.Sin(w * float64(n)), 1}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += x[i] * x[j]
			}
			m[i][3] += x[i] * float64(v)
		}
	}
	for i := range 3 { // Gauss-Jordan; the system is well conditioned
		for k := range 3 {
			if k != i {
				f := m[k][i] / m[i][i]
				for j := range 4 {
					m[k][j] -= f * m[i][j]
				}
			}
		}
	}
	a, b, c := m[0][3]/m[0][0], m[1][3]/m[1][1], m[2][3]/m[2][2]
	var sum float64
	for n, v := range y {
		d := float64(v) - a*math.Cos(w*float64(n)) - b*math.Sin(w*float64(n)) - c
		sum += d * d
	}
	return math.Hypot(a, b), math.Sqrt(sum / float64(len(y)))
}

func dB(x float64) float64 { return 20 * math.Log10(x) }

// MeasureQuality measures e converting inRate to outRate (outRate below
// inRate: the capture direction).
func MeasureQuality(e Engine, inRate, outRate int) (Quality, error) {
	q := Quality{AliasDB: math.Inf(1)}
	for f := 9000.0; f < float64(inRate)/2; f += 500 {
		out, _, err := runStream(e, inRate, outRate, tone(inRate, f, 0.6))
		if err != nil {
			return q, err
		}
		rej := min(200, dB(toneAmp/math.Sqrt2/max(rms(steady(out, outRate)), 1e-12)))
		q.AliasDB = min(q.AliasDB, rej)
		if f == 10000 {
			q.Alias10DB = rej
		}
	}
	for _, f := range []float64{100, 500, 1000, 2000, 3000, 4000, 5000, 6000} {
		out, _, err := runStream(e, inRate, outRate, tone(inRate, f, 0.5))
		if err != nil {
			return q, err
		}
		amp, _ := fitSine(steady(out, outRate), 2*math.Pi*f/float64(outRate))
		q.PassDB = max(q.PassDB, math.Abs(dB(amp/toneAmp)))
	}
	out, _, err := runStream(e, inRate, outRate, tone(inRate, 1000, 1))
	if err != nil {
		return q, err
	}
	amp, resid := fitSine(steady(out, outRate), 2*math.Pi*1000/float64(outRate))
	q.THDNDB = min(200, dB(amp/math.Sqrt2/max(resid, 1e-15)))
	imp := make([]float32, inRate)
	imp[inRate/2] = 1
	out, backlog, err := runStream(e, inRate, outRate, imp)
	if err != nil {
		return q, err
	}
	q.DelayMS = (peak(out)/float64(outRate) - 0.5) * 1000
	q.BacklogMS = float64(backlog) / float64(time.Millisecond)
	return q, nil
}

// peak returns the position of the largest magnitude, refined by a
// parabola through its neighbours.
func peak(s []float32) float64 {
	k := 0
	for i, v := range s {
		if math.Abs(float64(v)) > math.Abs(float64(s[k])) {
			k = i
		}
	}
	if k == 0 || k == len(s)-1 {
		return float64(k)
	}
	a, b, c := math.Abs(float64(s[k-1])), math.Abs(float64(s[k])), math.Abs(float64(s[k+1]))
	if d := a - 2*b + c; d != 0 {
		return float64(k) + 0.5*(a-c)/d
	}
	return float64(k)
}
