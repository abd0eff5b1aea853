//go:build amd64 && !purego

package card

import (
	"unicode/utf8"

	"golang.org/x/sys/cpu"
)

// indexSpecialAVX2 is indexSpecial with AVX2 over the whole 32-byte blocks
// of p: the index of the first special byte, or the length of those
// blocks when none is.
//
//go:noescape
func indexSpecialAVX2(p []byte) int

// quoteEndAVX2 is quoteEnd with AVX2 while 32 bytes are left: stopped
// reports that p[n] ends the scan, else the caller scans from n.
//
//go:noescape
func quoteEndAVX2(p []byte) (n int, esc, stopped bool)

// utf8BlocksAVX2 validates the whole 32-byte blocks of p as UTF-8 that
// continues the block *prev, and stores its last block in *prev.
//
//go:noescape
func utf8BlocksAVX2(p []byte, prev *[32]byte) (bad bool)

// gatherAVX2 makes the copies ops from src to out (see appendGathered).
//
//go:noescape
func gatherAVX2(out, src []byte, ops []gatherOp)

// jsonBlocksAVX2 fills out with the masks of p's whole 64-byte blocks,
// as many as out holds, and returns their count.
//
//go:noescape
func jsonBlocksAVX2(p []byte, out []jsonBlock) int

// quoteEndAVX512 is quoteEnd with AVX-512, 64 bytes a step to the end
// of p: the last step loads what is left under a mask, and the zeros
// past the end stop the scan there.
//
//go:noescape
func quoteEndAVX512(p []byte) (n int, esc bool)

// validUTF8AVX512 is validUTF8 with AVX-512, 64 bytes a step to the end
// of p (the last step under a mask).
//
//go:noescape
func validUTF8AVX512(p []byte) bool

// gatherAVX512 is gatherAVX2 with AVX-512: each copy moves 64 bytes a
// step and its last bytes under a mask, so that it writes nothing past
// its end.
//
//go:noescape
func gatherAVX512(out, src []byte, ops []gatherOp)

// hasAVX2 and hasAVX512 select the assembly kernels; without AVX2 (or
// with the purego tag) the pure-Go ones run. The AVX-512 kernels use
// byte and word instructions (BW), their 256-bit forms (VL) and BZHI
// (BMI2) for the masks of their last steps; x/sys/cpu reports AVX-512
// only when the OS saves its registers.
var (
	hasAVX2   = cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2
)

// indexSpecial returns the index of the first byte of p that is '"', '\\'
// or a control byte, or len(p).
func indexSpecial(p []byte) int {
	if !hasAVX2 || len(p) < 32 {
		return indexSpecialGeneric(p)
	}
	i := indexSpecialAVX2(p)
	if i < len(p)&^31 {
		return i
	}
	return i + indexSpecialGeneric(p[i:])
}

// quoteEnd returns the index of the first byte of p that ends a string
// body (see quoteEndGeneric), or len(p), and whether short escapes were
// skipped on the way.
func quoteEnd(p []byte) (n int, esc bool) {
	if hasAVX512 {
		return quoteEndAVX512(p)
	}
	if hasAVX2 {
		return quoteEndAVX2Go(p)
	}
	return quoteEndGeneric(p, 0, false)
}

// quoteEndAVX2Go is quoteEnd with AVX2 while 32 bytes are left, then in Go.
func quoteEndAVX2Go(p []byte) (n int, esc bool) {
	if len(p) < 32 {
		return quoteEndGeneric(p, 0, false)
	}
	n, esc, stopped := quoteEndAVX2(p)
	if stopped {
		return n, esc
	}
	return quoteEndGeneric(p, n, esc)
}

// gather makes the copies ops from src to out, which is exactly as long
// as their output.
func gather(out, src []byte, ops []gatherOp) {
	if hasAVX512 {
		gatherAVX512(out, src, ops)
		return
	}
	if hasAVX2 {
		gatherAVX2(out, src, ops)
		return
	}
	gatherGeneric(out, src, ops)
}

// jsonBlocks fills out with the masks of p's whole 64-byte blocks, as
// many as out holds, and returns their count.
func jsonBlocks(p []byte, out []jsonBlock) int {
	if hasAVX2 {
		return jsonBlocksAVX2(p, out)
	}
	return jsonBlocksGeneric(p, out)
}

// validUTF8 reports whether p is valid UTF-8, as utf8.Valid does.
func validUTF8(p []byte) bool {
	if hasAVX512 {
		return validUTF8AVX512(p)
	}
	if hasAVX2 {
		return validUTF8AVX2(p)
	}
	return utf8.Valid(p)
}

// validUTF8AVX2 is validUTF8 with AVX2.
func validUTF8AVX2(p []byte) bool {
	var prev [32]byte
	n := len(p) &^ 31
	if utf8BlocksAVX2(p[:n], &prev) {
		return false
	}
	var tail [64]byte // the rest, then zeros: an unfinished sequence fails
	copy(tail[:], p[n:])
	return !utf8BlocksAVX2(tail[:], &prev)
}
