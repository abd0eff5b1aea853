//go:build !amd64 || purego

package card

import "unicode/utf8"

const hasAVX2, hasAVX512 = false, false

// indexSpecial returns the index of the first byte of p that is '"', '\\'
// or a control byte, or len(p).
func indexSpecial(p []byte) int { return indexSpecialGeneric(p) }

// quoteEnd returns the index of the first byte of p that ends a string
// body (see quoteEndGeneric), or len(p), and whether short escapes were
// skipped on the way.
func quoteEnd(p []byte) (n int, esc bool) { return quoteEndGeneric(p, 0, false) }

// gather makes the copies ops from src to out, which is exactly as long
// as their output.
func gather(out, src []byte, ops []gatherOp) { gatherGeneric(out, src, ops) }

// jsonBlocks fills out with the masks of p's whole 64-byte blocks, as
// many as out holds, and returns their count.
func jsonBlocks(p []byte, out []jsonBlock) int { return jsonBlocksGeneric(p, out) }

// validUTF8 reports whether p is valid UTF-8.
func validUTF8(p []byte) bool { return utf8.Valid(p) }
