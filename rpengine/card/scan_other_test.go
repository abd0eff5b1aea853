//go:build !amd64 || purego

package card

// scanKernel is a set of kernels the benchmarks can select: use selects
// it and returns what restores the one before.
type scanKernel struct {
	name string
	use  func() (restore func())
}

// scanKernels lists the kernels this build has: Go only.
func scanKernels() []scanKernel {
	return []scanKernel{{"go", func() func() { return func() {} }}}
}
