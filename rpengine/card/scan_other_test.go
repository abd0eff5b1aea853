//go:build !amd64 || purego

package card

import "unicode/utf8"

// scanKernels lists the kernels this build has: Go only.
func scanKernels() []scanKernel {
	return []scanKernel{{"go", func() func() { return func() {} }}}
}

// scanImpls lists the kernels this build has: Go only.
func scanImpls() []scanImpl {
	return []scanImpl{{"go", func(p []byte) (int, bool) { return quoteEndGeneric(p, 0, false) }, utf8.Valid, gatherGeneric}}
}
