package audio

// dotGeneric returns the dot product of a and b[:len(a)]; len(a) must be a
// multiple of 8. It is the pure-Go kernel and the reference for any
// assembly version.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for i := 0; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotFunc is the signature of the dot-product kernels.
type dotFunc func(a, b []float32) float32

// kernel returns the fastest dot-product kernel available, or the pure-Go
// one when generic is set (tests compare the two).
func kernel(generic bool) dotFunc {
	if hasAVX2 && !generic {
		return dotAVX2
	}
	return dotGeneric
}
