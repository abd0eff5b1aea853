package audio

// The resampler's hot loop is a batch of dot products: each output is the
// dot product of one coefficient row with a window of the input. A kernel
// computes a whole batch in one call, so the assembly ones pay no Go call,
// bounds check or slice header per output.

// dotGeneric returns the dot product of a and b[:len(a)]; len(a) must be a
// multiple of 8. It is the pure-Go inner product and the reference for the
// assembly kernels. Its sums (two chains, products added in pairs) are
// the ones dots4Generic makes for each of its outputs, so an output has
// the same bits whichever of the two computes it.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1 float32
	for i := 0; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += (aa[0]*bb[0] + aa[1]*bb[1]) + (aa[2]*bb[2] + aa[3]*bb[3])
		s1 += (aa[4]*bb[4] + aa[5]*bb[5]) + (aa[6]*bb[6] + aa[7]*bb[7])
	}
	return s0 + s1
}

// dots4Generic is dotGeneric for four windows and one row: the row is
// read once for all four, which saves a fifth of the loads that bound the
// pure-Go kernel (48 to 16 kHz has one row; issue #24).
func dots4Generic(a, b0, b1, b2, b3 []float32) (r0, r1, r2, r3 float32) {
	n := len(a)
	b0, b1, b2, b3 = b0[:n], b1[:n], b2[:n], b3[:n]
	var s0, s1, t0, t1, u0, u1, v0, v1 float32
	for i := 0; i+8 <= n; i += 8 {
		// One half of the row at a time keeps four coefficients and the
		// eight sums in registers.
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		x, y, z, w := b0[i:i+4:i+4], b1[i:i+4:i+4], b2[i:i+4:i+4], b3[i:i+4:i+4]
		s0 += (a0*x[0] + a1*x[1]) + (a2*x[2] + a3*x[3])
		t0 += (a0*y[0] + a1*y[1]) + (a2*y[2] + a3*y[3])
		u0 += (a0*z[0] + a1*z[1]) + (a2*z[2] + a3*z[3])
		v0 += (a0*w[0] + a1*w[1]) + (a2*w[2] + a3*w[3])
		a0, a1, a2, a3 = a[i+4], a[i+5], a[i+6], a[i+7]
		x, y, z, w = b0[i+4:i+8:i+8], b1[i+4:i+8:i+8], b2[i+4:i+8:i+8], b3[i+4:i+8:i+8]
		s1 += (a0*x[0] + a1*x[1]) + (a2*x[2] + a3*x[3])
		t1 += (a0*y[0] + a1*y[1]) + (a2*y[2] + a3*y[3])
		u1 += (a0*z[0] + a1*z[1]) + (a2*z[2] + a3*z[3])
		v1 += (a0*w[0] + a1*w[1]) + (a2*w[2] + a3*w[3])
	}
	return s0 + s1, t0 + t1, u0 + u1, v0 + v1
}

// dotsFunc is the signature of the batch kernels: for every k,
// out[k*stride] = dot(coef[rows[k]:][:taps], buf[wins[k]:][:taps]). taps
// must be a positive multiple of 8 and every row and window must lie in
// coef and buf: the assembly kernels do not check.
type dotsFunc func(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32)

// dotsGeneric is the pure-Go batch kernel. Four outputs in a row that
// share one coefficient row go through dots4Generic.
func dotsGeneric(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	k := 0
	for ; k+4 <= len(rows); k += 4 {
		r := int(rows[k])
		if rows[k+1] != rows[k] || rows[k+2] != rows[k] || rows[k+3] != rows[k] {
			break
		}
		w0, w1, w2, w3 := int(wins[k]), int(wins[k+1]), int(wins[k+2]), int(wins[k+3])
		out[k*stride], out[(k+1)*stride], out[(k+2)*stride], out[(k+3)*stride] = dots4Generic(coef[r:r+taps],
			buf[w0:w0+taps], buf[w1:w1+taps], buf[w2:w2+taps], buf[w3:w3+taps])
	}
	for ; k < len(rows); k++ {
		r, w := int(rows[k]), int(wins[k])
		out[k*stride] = dotGeneric(coef[r:r+taps], buf[w:w+taps])
	}
}

// kernel returns the fastest batch kernel available, or the pure-Go one
// when generic is set (tests compare the two).
func kernel(generic bool) dotsFunc {
	if hasDotsAsm && !generic {
		return dotsAsm
	}
	return dotsGeneric
}
