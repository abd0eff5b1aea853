package stream

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"unsafe"
)

// maxEncodedChunk is the longest base64 text of a chunk of maxChunkBytes.
var maxEncodedChunk = base64.StdEncoding.EncodedLen(maxChunkBytes)

// decodeBase64 decodes standard padded base64 s into *scratch, growing it
// once to the largest chunk, and returns the decoded length.
//
// The []byte(s) conversion does not copy: since Go 1.22 the compiler
// reuses the string's bytes when the slice neither escapes nor is written,
// which holds for base64.Encoding.Decode's source. An allocation test
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
// length) to dst. On a little-endian machine (every platform a game ships
// on) the wire bytes already are the samples' memory layout, so it is one
// copy: 12 µs became under 1 µs per 32 KiB chunk (bench/, issue #8).
func appendSamples(dst []int16, b []byte) []int16 {
	n := len(b) / 2
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	if nativeLittleEndian && n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 2*n), b)
	} else {
		decodeSamples(out, b)
	}
	return dst[:len(dst)+n]
}

// appendDecoded appends the samples of b to dst as appendSamples does,
// except that when b already is where they go (the capacity of dst that
// Assembler.lend gave the message decoder), it only extends dst.
func appendDecoded(dst []int16, b []byte) []int16 {
	n := len(b) / 2
	if nativeLittleEndian && n > 0 && cap(dst)-len(dst) >= n &&
		unsafe.Pointer(&b[0]) == unsafe.Pointer(unsafe.SliceData(dst[len(dst):cap(dst)])) {
		return dst[:len(dst)+n]
	}
	return appendSamples(dst, b)
}

// bytesOf returns the memory of s as bytes, for decoding little-endian
// samples into it on a little-endian machine.
func bytesOf(s []int16) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s))
}

// decodeSamples is the portable form of appendSamples' conversion: out[i]
// from the little-endian bytes b[2i:2i+2]. Tests hold the fast path to it.
func decodeSamples(out []int16, b []byte) {
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
}

// nativeLittleEndian reports whether int16 values are stored
// least-significant byte first on this machine.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

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
