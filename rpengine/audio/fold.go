package audio

// Folded dot products for integer decimation (48 to 16 kHz, 32 to 16 kHz):
// the pure-Go kernel's path when the resampler has a single phase (l = 1).
//
// Scalar Go has no SIMD, so the pure-Go kernel is bound by the number of
// floating-point operations, and a one-phase filter allows two savings
// (issue #24: the pure-Go path at 48 to 16 kHz was slower than speexdsp):
//
//   - The one row is the prototype filter, symmetric about its centre:
//     row[q] == row[s-q] for s = taps-2 and every q in 0..s, bit for bit
//     (design evaluates the same float64 expression at ±t); only
//     row[taps-1], the window's edge, has no partner. An output is then
//     the sum over the pairs q <= s/2 of c[q] * (x[q] + x[s-q]), plus
//     row[taps-1] * x[taps-1]: 3 operations per pair of taps instead of 4.
//     At the centre q = s/2 the pair is (x+x) with c = row/2, which is
//     row*x exactly.
//   - Decimating by m, design places the cutoff at the output Nyquist
//     frequency, so the sinc is zero every m taps from the centre (an
//     m-th-band filter) and design sets those taps to exactly zero. At 3:1
//     a third of the pairs are zero and are skipped: the pairs come in
//     blocks of two couples, (q0, q0+1) and (q0+3, q0+4).
//
// The AVX2 kernel folds too (dotsFoldAVX2, on the row's wide form): it
// cannot skip the zero taps, which do not fall on whole lanes, but the
// fold halves its loads of coefficients and its multiply-adds, and four
// outputs share each coefficient load. The other assembly kernels use the
// plain row.

// folded is a one-phase row in folded form.
type folded struct {
	taps  int
	third bool      // blocks of the 3:1 pattern; otherwise of 4 consecutive pairs
	base  int       // q of the first pair of the first block
	coef  []float32 // 4 per block, in the order the block takes its pairs
	tailQ []int32   // pairs not in a block (their first index)
	tailC []float32
	edge  float32 // row[taps-1]
	// wide is the form of the AVX2 kernel, nil when taps < 16: blocks of
	// the 8 pairs q = 8b..8b+7 from q = 0 (zeros past the centre), then
	// the edge block, [0 0 0 0 0 0 0 row[taps-1]], which multiplies the
	// window's last 8 samples.
	wide []float32
}

// foldRow returns the folded form of the row of a filter decimating by m,
// or nil when the row is not symmetric as described above.
func foldRow(row []float32, m int) *folded {
	taps := len(row)
	if taps < 8 || taps%8 != 0 {
		return nil
	}
	s := taps - 2
	for q := 0; q < s-q; q++ {
		if row[q] != row[s-q] {
			return nil
		}
	}
	c := s / 2 // the centre
	f := &folded{taps: taps, edge: row[taps-1]}
	pair := func(q int) float32 {
		if q == c {
			return row[q] / 2
		}
		return row[q]
	}
	f.third = m == 3
	for q := c % 3; f.third && q < c; q += 3 {
		f.third = row[q] == 0 // every third tap from the centre
	}
	covered := make([]bool, c+1)
	if f.third {
		f.base = c%3 + 1
		for q := f.base; q+4 < c; q += 6 {
			for _, u := range [4]int{0, 1, 3, 4} {
				f.coef = append(f.coef, pair(q+u))
				covered[q+u] = true
			}
		}
	} else {
		for q := 0; q+3 <= c; q += 4 {
			for u := range 4 {
				f.coef = append(f.coef, pair(q+u))
				covered[q+u] = true
			}
		}
	}
	for q := range c + 1 {
		if !covered[q] && row[q] != 0 {
			f.tailQ = append(f.tailQ, int32(q))
			f.tailC = append(f.tailC, pair(q))
		}
	}
	f.wide = wideRow(row, c, pair)
	return f
}

// wideRow returns the wide form (see folded.wide) of a row whose centre
// is c and whose pair coefficients are pair(q), or nil when the row is
// too short: the mirrored half of the last block would start before the
// window.
func wideRow(row []float32, c int, pair func(q int) float32) []float32 {
	taps := len(row)
	nb := (c + 8) / 8 // blocks covering q = 0..c
	if taps < 16 || taps-9-8*(nb-1) < 0 {
		return nil
	}
	wide := make([]float32, 8*nb+8)
	for q := range c + 1 {
		wide[q] = pair(q)
	}
	wide[len(wide)-1] = row[taps-1]
	return wide
}

// size is the folded row's size in bytes.
func (f *folded) size() int {
	if f == nil {
		return 0
	}
	return 4 * (len(f.coef) + len(f.tailQ) + len(f.tailC) + len(f.wide))
}

// dots is the folded batch kernel: for every k, out[k*stride] is the
// output of the window buf[wins[k]:][:taps]. Four outputs at a time share
// the loads of the coefficients. An output has the same bits whichever of
// dot, dots4 and dots4Third computes it (the same operations in the same
// order), so the output does not depend on how the input is chunked.
func (f *folded) dots(out []float32, stride int, buf []float32, wins []int32) {
	taps := f.taps
	k := 0
	for ; k+4 <= len(wins); k += 4 {
		w0, w1, w2, w3 := int(wins[k]), int(wins[k+1]), int(wins[k+2]), int(wins[k+3])
		if f.third {
			if w1 != w0+3 || w2 != w0+6 || w3 != w0+9 {
				break // not a 3:1 batch; one at a time
			}
			out[k*stride], out[(k+1)*stride], out[(k+2)*stride], out[(k+3)*stride] = f.dots4Third(buf[w0 : w0+taps+9])
			continue
		}
		out[k*stride], out[(k+1)*stride], out[(k+2)*stride], out[(k+3)*stride] = f.dots4(
			buf[w0:w0+taps], buf[w1:w1+taps], buf[w2:w2+taps], buf[w3:w3+taps])
	}
	for ; k < len(wins); k++ {
		w := int(wins[k])
		out[k*stride] = f.dot(buf[w : w+taps])
	}
}

// dot is one output, of the window x.
func (f *folded) dot(x []float32) float32 {
	var acc float32
	if f.third {
		acc = f.blocksThird(x)
	} else {
		acc = f.blocks(x)
	}
	x = x[:f.taps]
	s := f.taps - 2
	for i, q := range f.tailQ {
		acc += f.tailC[i] * (x[q] + x[s-int(q)])
	}
	return acc + f.edge*x[f.taps-1]
}

// dots4 is dot for four windows.
func (f *folded) dots4(x0, x1, x2, x3 []float32) (r0, r1, r2, r3 float32) {
	taps := f.taps
	x0, x1, x2, x3 = x0[:taps], x1[:taps], x2[:taps], x3[:taps]
	r0, r1, r2, r3 = f.blocks4(x0, x1, x2, x3)
	s := taps - 2
	for i, q := range f.tailQ {
		c, q := f.tailC[i], int(q)
		r0 += c * (x0[q] + x0[s-q])
		r1 += c * (x1[q] + x1[s-q])
		r2 += c * (x2[q] + x2[s-q])
		r3 += c * (x3[q] + x3[s-q])
	}
	e := taps - 1
	return r0 + f.edge*x0[e], r1 + f.edge*x1[e], r2 + f.edge*x2[e], r3 + f.edge*x3[e]
}

// dots4Third is dot for four windows three samples apart, as the windows
// of consecutive outputs are at 3:1: x holds the four (taps+9 samples).
func (f *folded) dots4Third(x []float32) (r0, r1, r2, r3 float32) {
	taps := f.taps
	x = x[:taps+9]
	r0, r1, r2, r3 = f.blocks4Third(x)
	s := taps - 2
	for i, q := range f.tailQ {
		c := f.tailC[i]
		lo, hi := (*[10]float32)(x[q:q+10]), (*[10]float32)(x[s-int(q):s-int(q)+10])
		r0 += c * (lo[0] + hi[0])
		r1 += c * (lo[3] + hi[3])
		r2 += c * (lo[6] + hi[6])
		r3 += c * (lo[9] + hi[9])
	}
	e := (*[10]float32)(x[taps-1 : taps+9])
	return r0 + f.edge*e[0], r1 + f.edge*e[3], r2 + f.edge*e[6], r3 + f.edge*e[9]
}

// blocks sums the blocks of 4 consecutive pairs of the window x.
func (f *folded) blocks(x []float32) float32 {
	x = x[:f.taps]
	s := f.taps - 2
	var acc float32
	for j := 0; j+4 <= len(f.coef); j += 4 {
		c := (*[4]float32)(f.coef[j : j+4])
		lo, hi := (*[4]float32)(x[j:j+4]), (*[4]float32)(x[s-j-3:s-j+1])
		acc += (c[0]*(lo[0]+hi[3]) + c[1]*(lo[1]+hi[2])) + (c[2]*(lo[2]+hi[1]) + c[3]*(lo[3]+hi[0]))
	}
	return acc
}

// blocks4 is blocks for four windows.
func (f *folded) blocks4(x0, x1, x2, x3 []float32) (a0, a1, a2, a3 float32) {
	taps, coef := f.taps, f.coef
	x0, x1, x2, x3 = x0[:taps], x1[:taps], x2[:taps], x3[:taps]
	s := taps - 2
	for j := 0; j+4 <= len(coef); j += 4 {
		c := (*[4]float32)(coef[j : j+4])
		c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
		lo, hi := (*[4]float32)(x0[j:j+4]), (*[4]float32)(x0[s-j-3:s-j+1])
		a0 += (c0*(lo[0]+hi[3]) + c1*(lo[1]+hi[2])) + (c2*(lo[2]+hi[1]) + c3*(lo[3]+hi[0]))
		lo, hi = (*[4]float32)(x1[j:j+4]), (*[4]float32)(x1[s-j-3:s-j+1])
		a1 += (c0*(lo[0]+hi[3]) + c1*(lo[1]+hi[2])) + (c2*(lo[2]+hi[1]) + c3*(lo[3]+hi[0]))
		lo, hi = (*[4]float32)(x2[j:j+4]), (*[4]float32)(x2[s-j-3:s-j+1])
		a2 += (c0*(lo[0]+hi[3]) + c1*(lo[1]+hi[2])) + (c2*(lo[2]+hi[1]) + c3*(lo[3]+hi[0]))
		lo, hi = (*[4]float32)(x3[j:j+4]), (*[4]float32)(x3[s-j-3:s-j+1])
		a3 += (c0*(lo[0]+hi[3]) + c1*(lo[1]+hi[2])) + (c2*(lo[2]+hi[1]) + c3*(lo[3]+hi[0]))
	}
	return
}

// blocksThird sums the blocks of the 3:1 pattern of the window x: pairs
// q0, q0+1, q0+3 and q0+4, with q0 = base + 6j.
func (f *folded) blocksThird(x []float32) float32 {
	x = x[:f.taps]
	s := f.taps - 2
	var acc float32
	for j, q := 0, f.base; j+4 <= len(f.coef); j, q = j+4, q+6 {
		c := (*[4]float32)(f.coef[j : j+4])
		lo, hi := (*[5]float32)(x[q:q+5]), (*[5]float32)(x[s-q-4:s-q+1])
		acc += (c[0]*(lo[0]+hi[4]) + c[1]*(lo[1]+hi[3])) + (c[2]*(lo[3]+hi[1]) + c[3]*(lo[4]+hi[0]))
	}
	return acc
}

// blocks4Third is blocksThird for the four windows of dots4Third: every
// load is at a constant offset from one of two indices, which leaves the
// compiler registers for the sums.
func (f *folded) blocks4Third(x []float32) (a0, a1, a2, a3 float32) {
	taps, coef := f.taps, f.coef
	x = x[:taps+9]
	s := taps - 2
	for j, q := 0, f.base; j+4 <= len(coef); j, q = j+4, q+6 {
		c := (*[4]float32)(coef[j : j+4])
		c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
		// lo[3k+u] is x[q+u] of window k; hi[3k+4-u] is its x[s-q-u].
		lo, hi := (*[14]float32)(x[q:q+14]), (*[14]float32)(x[s-q-4:s-q+10])
		a0 += (c0*(lo[0]+hi[4]) + c1*(lo[1]+hi[3])) + (c2*(lo[3]+hi[1]) + c3*(lo[4]+hi[0]))
		a1 += (c0*(lo[3]+hi[7]) + c1*(lo[4]+hi[6])) + (c2*(lo[6]+hi[4]) + c3*(lo[7]+hi[3]))
		a2 += (c0*(lo[6]+hi[10]) + c1*(lo[7]+hi[9])) + (c2*(lo[9]+hi[7]) + c3*(lo[10]+hi[6]))
		a3 += (c0*(lo[9]+hi[13]) + c1*(lo[10]+hi[12])) + (c2*(lo[12]+hi[10]) + c3*(lo[13]+hi[9]))
	}
	return
}
