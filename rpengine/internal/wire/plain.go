package wire

import (
	"encoding/binary"
	"math/bits"
)

// plainLen returns the length of the longest prefix of s whose bytes are
// all printable ASCII other than '"' and '\\': the bytes a JSON string
// holds as they are. A string's content ends at the first byte that is
// not, and when that byte is its closing quote the content needs no
// decoding and no further check. A long string is checked 32 bytes a
// step with AVX2 (a chunk's data, when it is not decoded as it is
// scanned: see decodeData).
//
// Keys and ids are short: the first plainHead bytes are looked at in Go,
// and the kernel only runs past them. Entering it costs more than a short
// string does (bench/, issue #24: with a call per key, 12 µs a chunk).
func plainLen(s []byte) int {
	if !hasAVX2 || len(s) < plainHead+32 {
		return plainGeneric(s)
	}
	if n := plainGeneric(s[:plainHead]); n < plainHead {
		return n
	}
	n := plainHead + plainAVX2(s[plainHead:])
	return n + plainGeneric(s[n:])
}

// plainHead is how much of a string plainLen checks before the kernel.
const plainHead = 64

// plainGeneric is plainLen in pure Go, 8 bytes a step, and the reference
// for the assembly kernel.
func plainGeneric(s []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		q, e := w^(ones*'"'), w^(ones*'\\')
		// A byte below 0x20 borrows into its top bit, one at or above
		// 0x80 has it, and a quote or backslash turns into a zero byte
		// that borrows; borrows only carry upward, past the first
		// such byte.
		if m := ((w - ones*0x20) | w | ((q - ones) &^ q) | ((e - ones) &^ e)) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x80 || b == '"' || b == '\\' {
			return i
		}
	}
	return i
}
