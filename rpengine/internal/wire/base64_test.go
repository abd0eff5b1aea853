package wire

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// Test_decodeRun checks the kernel in use (AVX2 when the CPU has it)
// against decodeGeneric and encoding/base64: every length up to 200, a
// byte outside the alphabet at every offset, and destinations of every
// size around the output, so that the 32-byte stores never pass the end
// of dst (issue #24).
func Test_decodeRun(t *testing.T) {
	t.Parallel()
	seed := uint64(2424)
	t.Logf("seed %d (AVX2 kernel: %v)", seed, hasAVX2)
	r := rand.New(rand.NewPCG(seed, 1))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	check := func(src []byte, room int) {
		t.Helper()
		dst := make([]byte, room+64)
		for i := range dst {
			dst[i] = 0xa5
		}
		ns, nd := decodeRun(dst[:room], src)
		gs, gd := decodeGeneric(make([]byte, room), src)
		if ns != gs || nd != gd {
			t.Fatalf("%q into %d bytes: decodeRun %d,%d, decodeGeneric %d,%d", src, room, ns, nd, gs, gd)
		}
		for _, b := range dst[room:] {
			if b != 0xa5 {
				t.Fatalf("%q into %d bytes: wrote past the end of dst", src, room)
			}
		}
		want, err := base64.StdEncoding.DecodeString(string(src[:ns]))
		if err != nil || string(want) != string(dst[:nd]) {
			t.Fatalf("%q: decoded %x, encoding/base64 %x (%v)", src[:ns], dst[:nd], want, err)
		}
	}
	for n := 0; n <= 200; n++ {
		src := make([]byte, n)
		for i := range src {
			src[i] = alphabet[r.IntN(64)]
		}
		for room := max(0, n/4*3-40); room <= n/4*3+40; room++ {
			check(src, room)
		}
		for at := range n {
			old := src[at]
			for _, b := range []byte{'=', '"', '\\', '\n', 0, '-', '_', '.', '@', '[', '`', '{', 0x7f, 0x80, 0xff, 0x2a, 0x2c, 0x3a} {
				src[at] = b
				check(src, n)
			}
			src[at] = old
		}
	}
	for range 5000 { // every byte value
		src := make([]byte, r.IntN(300))
		for i := range src {
			src[i] = alphabet[r.IntN(64)]
			if r.IntN(64) == 0 {
				src[i] = byte(r.IntN(256))
			}
		}
		check(src, len(src))
	}
}
