package audio

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Filter design for the resampler (docs/audio.md, "Resampling, and why it
// is done in Go"). The stop band starts at stopFrac times the lower
// Nyquist frequency when downsampling (9 kHz for a 16 kHz output: tones
// between 8 and 9 kHz fold into the 7-8 kHz edge, which speech does not
// use) and at the input Nyquist
// frequency when upsampling (so images are removed). attenuationDB is the
// Kaiser design target, a few dB above the 107 dB the tests assert.
// Decimating by an integer m (48 to 16 kHz), the -6 dB point is the
// output Nyquist frequency instead of downCutoffFrac of it: the filter is
// then an m-th-band one, zero every m taps from its centre, which the
// pure-Go kernel skips (fold.go). Its transition (7-9 kHz at 48 to 16 kHz)
// is narrower, so it has more taps (176 rather than 144) and 0.33 ms more
// delay, and it is flat to 7 kHz rather than 6.5.
const (
	attenuationDB   = 112.0
	downCutoffFrac  = 0.97  // -6 dB point, fraction of the output Nyquist
	downStopFrac    = 1.125 // stop band edge, fraction of the output Nyquist
	upCutoffFrac    = 0.90  // -6 dB point, fraction of the input Nyquist
	upStopFrac      = 1.0   // stop band edge, fraction of the input Nyquist
	maxExactPhases  = 640   // ratios needing more phases interpolate a table
	interpPhases    = 512   // table size for interpolated ratios
	tapMultiple     = 8     // taps per phase are padded to this for unrolling
	minResampleRate = 1000
	maxResampleRate = 768000
)

// Resampler converts interleaved float32 audio from one sample rate to
// another with a windowed-sinc polyphase FIR (Kaiser window, 112 dB design
// attenuation). It streams: each call to [Resampler.Append] consumes all of
// its input and emits every output sample that input determines, so nothing
// is held back beyond the filter's fixed [Resampler.Delay]. Equal input
// and output rates pass the samples through unchanged.
//
// A Resampler is a passive value and is not safe for concurrent use.
type Resampler struct {
	inRate, outRate, channels int

	l, m   int       // out/in = l/m in lowest terms
	taps   int       // filter taps per phase (a multiple of tapMultiple)
	phases int       // rows in coef (l when exact, interpPhases+1 otherwise)
	exact  bool      // one row per phase; otherwise interpolate rows
	coef   []float32 // phases rows of taps, reversed for an ascending dot product
	folded *folded   // one phase only: the row in folded form (fold.go), or nil

	dots    dotsFunc    // dot-product batch kernel
	fold    bool        // filter with folded.dots (the pure-Go kernel's path)
	foldAsm bool        // filter with folded.dotsAsm (the AVX2 kernel's path)
	bufs    [][]float32 // per channel: taps-1 history then new input
	pos     int         // buffer index of the newest input of the next output
	frac    int         // phase of the next output, 0..l-1
	row     int         // coef row of that phase (exact phases; see design)
	inc     []int32     // exact phases: input samples from the output of row j to the next

	// The batch of one run, the same for every channel: per dot product,
	// its coefficient row and input window (offsets), and for the
	// interpolated phases the products (two per output) and weights.
	rows, wins []int32
	prods      []float32
	weights    []float32
}

// NewResampler returns a Resampler from inRate to outRate Hz (each 1000 to
// 768000) for interleaved audio of channels channels (1 to 64).
func NewResampler(inRate, outRate, channels int) (*Resampler, error) {
	if inRate < minResampleRate || inRate > maxResampleRate || outRate < minResampleRate || outRate > maxResampleRate {
		return nil, fmt.Errorf("audio: new resampler: rates %d -> %d Hz outside %d..%d", inRate, outRate, minResampleRate, maxResampleRate)
	}
	if channels < 1 || channels > 64 {
		return nil, fmt.Errorf("audio: new resampler: channel count %d outside 1..64", channels)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{inRate: inRate, outRate: outRate, channels: channels, l: outRate / g, m: inRate / g}
	if !tables.get(r) {
		r.design()
		if r.exact {
			r.steps()
		}
		tables.put(r)
	}
	r.setKernel(false)
	r.bufs = make([][]float32, channels)
	for c := range r.bufs {
		r.bufs[c] = make([]float32, r.taps-1, r.taps-1+1024)
	}
	r.Reset()
	return r, nil
}

// filterTable is a designed polyphase filter, shared read-only by every
// Resampler of the same two rates. Designing one costs about a millisecond
// (44.1 to 48 kHz: 160 rows of 80 taps, a Bessel series each), and a Player
// makes a Resampler for every reply, so the first sentence of each reply
// waited that long to be queued (bench/, issue #24).
type filterTable struct {
	taps, phases int
	exact        bool
	coef         []float32
	folded       *folded
	inc          []int32
}

// tableCache keeps the tables of the last maxTables rate pairs used, up
// to maxTableBytes of coefficients; a table over a quarter of that is not
// kept (rare rates whose ratio needs a long filter).
type tableCache struct {
	mu    sync.Mutex // guards following
	m     map[[2]int]*filterTable
	order [][2]int // oldest first
	bytes int
}

const (
	maxTables     = 64
	maxTableBytes = 4 << 20
)

var tables tableCache

// get gives r the shared table of its rates and reports whether there was
// one.
func (c *tableCache) get(r *Resampler) bool {
	c.mu.Lock()
	t := c.m[[2]int{r.inRate, r.outRate}]
	c.mu.Unlock()
	if t == nil {
		return false
	}
	r.taps, r.phases, r.exact, r.coef, r.inc, r.folded = t.taps, t.phases, t.exact, t.coef, t.inc, t.folded
	return true
}

// put keeps r's table for the next Resampler of its rates.
func (c *tableCache) put(r *Resampler) {
	t := &filterTable{taps: r.taps, phases: r.phases, exact: r.exact, coef: r.coef, folded: r.folded, inc: r.inc}
	size := t.size()
	if size > maxTableBytes/4 {
		return
	}
	k := [2]int{r.inRate, r.outRate}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[2]int]*filterTable)
	}
	if _, ok := c.m[k]; ok {
		return
	}
	for (c.bytes+size > maxTableBytes || len(c.order) >= maxTables) && len(c.order) > 0 {
		old := c.m[c.order[0]]
		c.bytes -= old.size()
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = t
	c.order = append(c.order, k)
	c.bytes += size
}

func (t *filterTable) size() int { return 4*len(t.coef) + 4*len(t.inc) + t.folded.size() }

// setKernel chooses the fastest kernel, or the pure-Go one when generic is
// set (tests compare the two). The pure-Go kernel and the AVX2 one take a
// one-phase row in folded form (fold.go).
func (r *Resampler) setKernel(generic bool) {
	r.dots = kernel(generic)
	r.fold = r.folded != nil && (generic || !hasDotsAsm)
	r.foldAsm = r.folded != nil && r.folded.wide != nil && hasFoldAsm && !generic
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// design computes the polyphase table.
func (r *Resampler) design() {
	in := float64(r.inRate)
	var cutoff, stop float64 // Hz
	if r.outRate < r.inRate {
		cutoff, stop = downCutoffFrac*float64(r.outRate)/2, downStopFrac*float64(r.outRate)/2
		if r.l == 1 { // decimating by m: an m-th-band filter (fold.go)
			cutoff = float64(r.outRate) / 2
		}
	} else {
		cutoff, stop = upCutoffFrac*in/2, upStopFrac*in/2
	}
	width := 2 * (stop - cutoff) / in // transition width, cycles per input sample
	taps := int(math.Ceil((attenuationDB-7.95)/(14.36*width))) + 1
	taps = (taps + tapMultiple - 1) / tapMultiple * tapMultiple
	r.taps = taps
	r.exact = r.l <= maxExactPhases
	step := r.l // phases of the prototype filter
	r.phases = r.l
	if !r.exact {
		step = interpPhases
		r.phases = interpPhases + 1
	}
	beta := 0.1102 * (attenuationDB - 8.7)
	fc := cutoff / in
	center := float64(taps*step) / 2
	i0b := besselI0(beta)
	nyquist := r.l == 1 && r.m > 1
	h := func(x float64) float64 { // x in prototype samples, 0..taps*step
		d := (x - center) / center
		if d < -1 || d > 1 {
			return 0
		}
		t := (x - center) / float64(step)
		s := 2 * fc
		switch {
		case nyquist && math.Mod(t, float64(r.m)) == 0 && t != 0:
			return 0 // a zero of the sinc, which sin() misses by an ulp
		case t != 0:
			s = math.Sin(2*math.Pi*fc*t) / (math.Pi * t)
		}
		return s * besselI0(beta*math.Sqrt(1-d*d)) / i0b
	}
	r.coef = make([]float32, r.phases*taps)
	row := make([]float64, taps)
	for j := range r.phases {
		p := r.phaseOfRow(j)
		var sum float64
		for q := range taps {
			row[q] = h(float64(p + (taps-1-q)*step))
			sum += row[q]
		}
		for q := range taps { // unity DC gain in every phase
			r.coef[j*taps+q] = float32(row[q] / sum)
		}
	}
	if r.l == 1 {
		r.folded = foldRow(r.coef, r.m)
	}
}

// steps fills inc: from the output of row j (phase p), the next output
// is m/l input samples on, one more when the phase wraps past l.
func (r *Resampler) steps() {
	r.inc = make([]int32, r.l)
	adv, step := r.m/r.l, r.m%r.l
	for j := range r.inc {
		r.inc[j] = int32(adv)
		if r.phaseOfRow(j)+step >= r.l {
			r.inc[j]++
		}
	}
}

// phaseOfRow returns the phase whose coefficients are row j of coef. With
// exact phases the rows are in the order the outputs use them: each output
// advances the phase by m mod l, so row j is phase j*(m mod l) mod l, and
// a run reads the table from start to end instead of jumping (at 44.1 to
// 16 kHz, 160 rows of 544 bytes: three times the L1 cache). m mod l and l
// are coprime (l/m is in lowest terms), so every phase has a row.
func (r *Resampler) phaseOfRow(j int) int {
	if !r.exact {
		return j
	}
	return j * (r.m % r.l) % r.l
}

func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// Reset clears the filter history, as if the Resampler were new.
func (r *Resampler) Reset() {
	for c := range r.bufs {
		b := r.bufs[c][:r.taps-1]
		clear(b)
		r.bufs[c] = b
	}
	r.pos, r.frac, r.row = r.taps-1, 0, 0
}

// Delay returns the filter's group delay: an impulse at input time t comes
// out at t+Delay. It is constant and is the only latency the Resampler adds.
func (r *Resampler) Delay() time.Duration {
	if r.l == r.m {
		return 0
	}
	return time.Duration(float64(r.taps) / 2 / float64(r.inRate) * float64(time.Second))
}

// MaxOutFrames returns an upper bound on the frames one [Resampler.Append]
// of inFrames frames can emit, for sizing dst: never negative, and never
// more than math.MaxInt divided by the channel count, so that times the
// channels it is a valid slice length. A negative inFrames counts as 0;
// an inFrames whose output would pass that bound returns the bound (no
// slice of src can hold such an input anyway).
func (r *Resampler) MaxOutFrames(inFrames int) int {
	limit := math.MaxInt / r.channels
	n := max(inFrames, 0)
	q, rest := n/r.m, n%r.m    // n*l/m = q*l + rest*l/m, without overflow
	if q > (limit-2-r.l)/r.l { // then q*l + l + 2 could pass limit
		return limit
	}
	return q*r.l + rest*r.l/r.m + 2
}

// Append resamples src (interleaved frames) and appends the output frames to
// dst, returning the extended slice. All of src is consumed. Append does not
// allocate once dst and the internal buffer have grown to the chunk size in
// use. It fails only when src is not a whole number of frames; dst is then
// returned unchanged.
func (r *Resampler) Append(dst, src []float32) ([]float32, error) {
	if len(src)%r.channels != 0 {
		return dst, fmt.Errorf("audio: resample: %d samples is not a whole number of %d-channel frames", len(src), r.channels)
	}
	if r.l == r.m { // equal rates: nothing to filter
		return append(dst, src...), nil
	}
	frames := len(src) / r.channels
	for c, b := range r.bufs {
		n := len(b)
		b = slices.Grow(b, frames)[:n+frames]
		if r.channels == 1 {
			copy(b[n:], src)
		} else {
			for i := range frames {
				b[n+i] = src[i*r.channels+c]
			}
		}
		r.bufs[c] = b
	}
	return r.run(dst), nil
}

// Flush appends the filter's whole tail (2×[Resampler.Delay] of output) as
// if the input had ended with silence, so no input is lost, and resets the
// Resampler for a new stream. It allocates a small zero buffer.
func (r *Resampler) Flush(dst []float32) []float32 {
	if r.l == r.m {
		return dst
	}
	pad := make([]float32, r.taps*r.channels)
	dst, _ = r.Append(dst, pad)
	r.Reset()
	return dst
}

// run emits every output whose window lies in the buffers, then keeps the
// last taps-1 inputs as history.
func (r *Resampler) run(dst []float32) []float32 {
	n := len(r.bufs[0])
	if r.pos < n {
		outs := int((int64(n-1-r.pos)*int64(r.l)+int64(r.l-1-r.frac))/int64(r.m)) + 1
		start := len(dst)
		dst = slices.Grow(dst, outs*r.channels)[:start+outs*r.channels]
		r.plan(outs)
		for c, b := range r.bufs {
			r.filter(dst[start+c:], b)
		}
	}
	keep := r.taps - 1
	for c, b := range r.bufs {
		copy(b, b[n-keep:])
		r.bufs[c] = b[:keep]
	}
	r.pos -= n - keep
	return dst
}

// plan lays out the dot products of the next outs outputs (the same for
// every channel) and advances the position and phase past them.
func (r *Resampler) plan(outs int) {
	taps, l := r.taps, r.l
	adv, step := r.m/l, r.m%l
	pos, frac, row := r.pos, r.frac, r.row
	n := outs
	if !r.exact {
		n = 2 * outs // two rows per output
	}
	rows := slices.Grow(r.rows[:0], n)[:n]
	wins := slices.Grow(r.wins[:0], n)[:n]
	r.weights = slices.Grow(r.weights[:0], outs)[:0]
	switch {
	case l == 1: // one phase, an integer ratio (48 to 16 kHz)
		wins = wins[:len(rows)]
		w := int32(pos + 1 - taps)
		for k := range rows {
			rows[k], wins[k] = 0, w+int32(k*adv)
		}
		pos += outs * adv
	case r.exact:
		wins, inc := wins[:len(rows)], r.inc[:l]
		w, ro := int32(pos+1-taps), int32(row*taps)
		for k := range rows {
			rows[k], wins[k] = ro, w
			w += inc[row]
			ro += int32(taps)
			if row++; row == l {
				row, ro = 0, 0
			}
		}
		pos = int(w) + taps - 1
		frac = r.phaseOfRow(row)
	default:
		for k := range outs {
			w := int32(pos + 1 - taps)
			x := uint64(frac) * interpPhases
			p := int32(x / uint64(l))
			rows[2*k], rows[2*k+1] = p*int32(taps), (p+1)*int32(taps)
			wins[2*k], wins[2*k+1] = w, w
			r.weights = append(r.weights, float32(x%uint64(l))/float32(l))
			pos += adv
			if frac += step; frac >= l {
				frac -= l
				pos++
			}
		}
	}
	r.rows, r.wins = rows, wins
	r.pos, r.frac, r.row = pos, frac, row
}

// checkPlan panics unless the planned batch lies within coef and a buffer
// of n samples. The windows ascend and every row is one of the table's, so
// the ends suffice; the assembly kernels trust their callers.
func (r *Resampler) checkPlan(n int) {
	if len(r.wins) > 0 && (r.wins[0] < 0 || int(r.wins[len(r.wins)-1])+r.taps > n || len(r.coef) != r.phases*r.taps) {
		panic("audio: resampler batch out of range")
	}
}

// filter computes one channel of the planned outputs from its buffer b
// into out (interleaved: output k at out[k*channels]).
func (r *Resampler) filter(out, b []float32) {
	ch := r.channels
	r.checkPlan(len(b))
	switch {
	case r.foldAsm:
		r.folded.dotsAsm(out, ch, b, r.wins)
		return
	case r.fold:
		r.folded.dots(out, ch, b, r.wins)
		return
	}
	if r.exact {
		r.dots(out, ch, r.coef, r.taps, b, r.rows, r.wins)
		return
	}
	// Interpolated phases: the two neighbouring rows, then a line
	// between them.
	r.prods = slices.Grow(r.prods[:0], len(r.rows))[:len(r.rows)]
	r.dots(r.prods, 1, r.coef, r.taps, b, r.rows, r.wins)
	for k, t := range r.weights {
		a, z := r.prods[2*k], r.prods[2*k+1]
		out[k*ch] = a + t*(z-a)
	}
}
