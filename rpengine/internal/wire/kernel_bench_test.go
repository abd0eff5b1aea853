package wire

import (
	"strings"
	"testing"
)

var b64data = []byte(strings.Repeat("QUJD", 10922) + `"}`)

func BenchmarkKernel(b *testing.B) {
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
