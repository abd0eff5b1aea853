package audio

import (
	"math"
	"time"
)

// Lip-sync tuning. Speech from a TTS engine peaks around -10 dBFS with an
// RMS of -30 to -15 dBFS on vowels; consonants and pauses fall below -40.
const (
	lipFrame     = 15 * time.Millisecond
	lipFloorDB   = -50.0 // RMS at or below this closes the mouth
	lipCeilingDB = -18.0 // RMS at or above this opens it fully
	lipAttack    = 20 * time.Millisecond
	lipRelease   = 50 * time.Millisecond
)

// LipSync turns audio into a mouth-openness value for animating a
// character: the RMS of 15 ms frames, mapped from -50..-18 dBFS onto 0..1
// and smoothed with a 20 ms attack and a 50 ms release so the mouth opens
// quickly and closes without flutter.
//
// A LipSync is a passive value, not safe for concurrent use. A [Speaker]
// runs one on what it is playing; see [Speaker.Mouth].
type LipSync struct {
	frame           int     // samples per frame
	sum             float64 // sum of squares in the current frame
	n               int     // samples in the current frame
	value           float32 // smoothed openness
	attack, release float32 // one-pole coefficients per frame
	floorDB, spanDB float32
}

// NewLipSync returns a LipSync for mono audio at sampleRate Hz.
func NewLipSync(sampleRate int) *LipSync {
	l := new(LipSync)
	l.init(sampleRate)
	return l
}

func (l *LipSync) init(sampleRate int) {
	*l = LipSync{frame: max(1, int(int64(sampleRate)*int64(lipFrame)/int64(time.Second)))}
	coef := func(tau time.Duration) float32 {
		return float32(1 - math.Exp(-lipFrame.Seconds()/tau.Seconds()))
	}
	l.attack, l.release = coef(lipAttack), coef(lipRelease)
	l.floorDB, l.spanDB = lipFloorDB, lipCeilingDB-lipFloorDB
}

// Push analyses the next mono samples. It does not allocate.
func (l *LipSync) Push(samples []float32) {
	for len(samples) > 0 {
		k := min(len(samples), l.frame-l.n)
		l.sum += float64(sumSquares(samples[:k]))
		l.n += k
		samples = samples[k:]
		if l.n == l.frame {
			l.step(l.sum / float64(l.n))
			l.sum, l.n = 0, 0
		}
	}
}

// sumSquares returns the sum of the squares of x, in four chains so that
// the additions do not wait on each other (three times the speed of one;
// it runs on every sample a speaker plays, issue #31).
func sumSquares(x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(x) >= 4 {
		q := x[:4:4]
		s0 += q[0] * q[0]
		s1 += q[1] * q[1]
		s2 += q[2] * q[2]
		s3 += q[3] * q[3]
		x = x[4:]
	}
	for _, v := range x {
		s0 += v * v
	}
	return (s0 + s1) + (s2 + s3)
}

func (l *LipSync) step(meanSquare float64) {
	target := float32(0)
	if meanSquare > 0 {
		dB := float32(10 * math.Log10(meanSquare))
		target = min(1, max(0, (dB-l.floorDB)/l.spanDB))
	}
	c := l.release
	if target > l.value {
		c = l.attack
	}
	l.value += c * (target - l.value)
}

// Openness returns the current mouth openness, 0 (closed) to 1 (fully
// open).
func (l *LipSync) Openness() float32 { return l.value }

// Reset closes the mouth and forgets the partial frame.
func (l *LipSync) Reset() {
	l.sum, l.n, l.value = 0, 0, 0
}
