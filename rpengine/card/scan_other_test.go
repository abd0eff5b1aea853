//go:build !amd64 || purego

package card

import "unicode/utf8"

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

// scanImpl is one set of kernels, called directly, whatever the CPU
// selects: the tests check each against the Go ones.
type scanImpl struct {
	name      string
	quoteEnd  func(p []byte) (int, bool)
	validUTF8 func(p []byte) bool
	gather    func(out, src []byte, ops []gatherOp)
}

// scanImpls lists the kernels this build has: Go only.
func scanImpls() []scanImpl {
	return []scanImpl{{"go", func(p []byte) (int, bool) { return quoteEndGeneric(p, 0, false) }, utf8.Valid, gatherGeneric}}
}
