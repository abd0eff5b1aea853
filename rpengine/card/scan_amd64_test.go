//go:build amd64 && !purego

package card

import "unicode/utf8"

// scanKernels lists the kernels this CPU can run: AVX-512, AVX2 and Go.
func scanKernels() []scanKernel {
	set := func(avx2, avx512 bool) func() func() {
		return func() func() {
			a, b := hasAVX2, hasAVX512
			hasAVX2, hasAVX512 = avx2, avx512
			return func() { hasAVX2, hasAVX512 = a, b }
		}
	}
	var ks []scanKernel
	if hasAVX512 {
		ks = append(ks, scanKernel{"avx512", set(true, true)})
	}
	if hasAVX2 {
		ks = append(ks, scanKernel{"avx2", set(true, false)})
	}
	return append(ks, scanKernel{"go", set(false, false)})
}

// scanImpls lists the kernels this CPU can run.
func scanImpls() []scanImpl {
	var ks []scanImpl
	if hasAVX512 {
		ks = append(ks, scanImpl{"avx512", quoteEndAVX512, validUTF8AVX512, gatherAVX512})
	}
	if hasAVX2 {
		ks = append(ks, scanImpl{"avx2", quoteEndAVX2Go, validUTF8AVX2, gatherAVX2})
	}
	return append(ks, scanImpl{"go", func(p []byte) (int, bool) { return quoteEndGeneric(p, 0, false) }, utf8.Valid, gatherGeneric})
}
