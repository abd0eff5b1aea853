package stream

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
)

// maxEncodedChunk is the longest base64 text of a chunk of maxChunkBytes.
var maxEncodedChunk = base64.StdEncoding.EncodedLen(maxChunkBytes)

// decodeBase64 decodes standard padded base64 s into *scratch, growing it
// once to the largest chunk, and returns the decoded length.
//
// The []byte(s) conversion does not copy: since Go 1.22 the compiler
// reuses the string's bytes when the slice neither escapes nor is written,
// which holds for base64.Encoding.Decode's source. TestAssembler_PushAllocs
// pins it (unsafe.StringData would be the fallback).
func decodeBase64(scratch *[]byte, s string) (int, error) {
	need := base64.StdEncoding.DecodedLen(len(s))
	if cap(*scratch) < need {
		*scratch = make([]byte, max(need, maxChunkBytes+3))
	}
	b := (*scratch)[:cap(*scratch)]
	*scratch = b
	return base64.StdEncoding.Decode(b, []byte(s))
}

// appendSamples appends the little-endian 16-bit samples of b (even
// length) to dst.
func appendSamples(dst []int16, b []byte) []int16 {
	n := len(b) / 2
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return dst[:len(dst)+n]
}

// sameSamples reports whether the little-endian bytes b encode have.
func sameSamples(have []int16, b []byte) bool {
	if len(b) != 2*len(have) {
		return false
	}
	for i, v := range have {
		if int16(binary.LittleEndian.Uint16(b[2*i:])) != v {
			return false
		}
	}
	return true
}
