//go:build amd64 && !purego

package wire

import (
	"strings"
	"testing"
)

// b64data is the data string of a 32 KiB chunk and what follows it.
var b64data = []byte(strings.Repeat("QUJD", 10922) + `"}`)

// BenchmarkKernels measures each assembly kernel against its pure-Go twin
// on the 44 KB data string of a full reply.audio.chunk, and the chunk
// decoder with and without them (without, the data is scanned in Go and
// left to the caller's encoding/base64): the figures of bench/README.md,
// "Assembly kernels". A kernel stays only while it is at least twice as
// fast as its Go code (issue #30).
func BenchmarkKernels(b *testing.B) {
	dst := make([]byte, 40<<10)
	b.Run("plain/avx2", func(b *testing.B) {
		b.SetBytes(int64(len(b64data)))
		for b.Loop() {
			plainLen(b64data)
		}
	})
	b.Run("plain/go", func(b *testing.B) {
		b.SetBytes(int64(len(b64data)))
		for b.Loop() {
			plainGeneric(b64data)
		}
	})
	b.Run("decode/avx2", func(b *testing.B) {
		b.SetBytes(int64(len(b64data)))
		for b.Loop() {
			decodeRun(dst, b64data)
		}
	})
	b.Run("decode/go", func(b *testing.B) {
		b.SetBytes(int64(len(b64data)))
		for b.Loop() {
			decodeGeneric(dst, b64data)
		}
	})
	var c AudioChunk
	b.Run("chunk/avx2", func(b *testing.B) {
		var d ChunkDecoder
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			d.Decode(&c, chunk)
		}
	})
	b.Run("chunk/go", func(b *testing.B) {
		old := hasAVX2
		hasAVX2 = false
		defer func() { hasAVX2 = old }()
		var d ChunkDecoder
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			d.Decode(&c, chunk)
		}
	})
}
