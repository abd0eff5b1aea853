//go:build amd64 && !purego

package wire

import "golang.org/x/sys/cpu"

// plainAVX2 is plainGeneric with AVX2 over the whole 32-byte blocks of s:
// it returns the index of the first byte that is not plain, or the length
// of those blocks when they all are.
//
//go:noescape
func plainAVX2(s []byte) int

// hasAVX2 selects the assembly kernel; without AVX2 (or with the purego
// tag) the pure-Go one runs.
var hasAVX2 = cpu.X86.HasAVX2

// decodeAVX2 decodes whole 32-character blocks of base64 alphabet from src
// into dst while dst has 32 bytes of room (it writes 24 and clobbers 8 more
// a block), and returns the characters decoded: it stops before the first
// block holding another byte. decodeGeneric is its reference.
//
//go:noescape
func decodeAVX2(dst, src []byte) int
