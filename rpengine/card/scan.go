package card

import (
	"encoding/binary"
	"math/bits"
)

// The string scan of documents that are valid UTF-8 as a whole (checked
// once, with AVX-512 or AVX2 where there is: scan_amd64.s): inside such a
// document a string ends at its first unescaped '"', and only '"', '\\'
// and control bytes need a look, so multibyte characters do not stop the
// scan.

// quoteMask sets the top bit of the bytes of w (in memory order, little
// endian) that are '"', '\\' or below 0x20, and of no byte before the
// first of them: specialMask without the non-ASCII bytes (see there; a
// byte with its top bit set borrows nothing).
func quoteMask(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ (ones * 0x02)
	e := w ^ (ones * '\\')
	return ((q - ones*0x21) | (e - ones)) &^ w & highs
}

// indexSpecialGeneric is indexSpecial a word at a time.
func indexSpecialGeneric(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if m := quoteMask(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(p); i++ {
		if b := p[i]; b == '"' || b == '\\' || b < 0x20 {
			return i
		}
	}
	return i
}

// quoteEndGeneric returns the index of the first byte of p from i that
// ends a string body in a valid UTF-8 document: '"', a control byte, or a
// backslash not followed by a short escape (the \u and \/ escapes, which
// the canonical form rewrites, and invalid ones). Short escapes are
// skipped, and esc (or the esc passed in) reports them.
func quoteEndGeneric(p []byte, i int, esc bool) (int, bool) {
	for {
		i += indexSpecialGeneric(p[i:])
		if i+1 >= len(p) || p[i] != '\\' || !shortEscape[p[i+1]] {
			return min(i, len(p)), esc
		}
		esc = true
		i += 2
	}
}

// scanValidString is scanString for a document that is valid UTF-8.
func scanValidString(src []byte, i int) (end int, esc, ok bool) {
	i++
	// Most strings are short: two words before the vector scan, which
	// goes on from the first byte they did not clear.
	if i+16 <= len(src) {
		w := src[i : i+16 : i+16]
		w0, w1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		if m := quoteMask(w0); m != 0 {
			if i += bits.TrailingZeros64(m) >> 3; src[i] == '"' {
				return i + 1, false, true
			}
		} else if m := quoteMask(w1); m != 0 {
			if i += 8 + bits.TrailingZeros64(m)>>3; src[i] == '"' {
				return i + 1, false, true
			}
		} else {
			i += 16
		}
	}
	n, esc := quoteEnd(src[i:])
	if i += n; i < len(src) && src[i] == '"' {
		return i + 1, esc, true
	}
	return 0, esc, false
}
