//go:build amd64 && !purego

package card

// scanKernel is a set of kernels the benchmarks can select: use selects
// it and returns what restores the one before.
type scanKernel struct {
	name string
	use  func() (restore func())
}

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
