package wire

import (
	"math/rand/v2"
	"testing"
)

// Test_plainLen checks the kernel in use (AVX2 when the CPU has it)
// against plainGeneric and against a byte at a time, with every kind of
// byte that ends a plain run at every offset of inputs of every length up
// to 200 (so the head checked in Go, the 32-byte blocks and the tail are
// all crossed). Issue #24.
func Test_plainLen(t *testing.T) {
	t.Parallel()
	ref := func(s []byte) int {
		for i, b := range s {
			if b < 0x20 || b >= 0x80 || b == '"' || b == '\\' {
				return i
			}
		}
		return len(s)
	}
	seed := uint64(24)
	t.Logf("seed %d (AVX2 kernel: %v)", seed, hasAVX2)
	r := rand.New(rand.NewPCG(seed, 1))
	stops := []byte{0x00, 0x1f, '"', '\\', 0x80, 0xc3, 0xff}
	for n := 0; n <= 200; n++ {
		s := make([]byte, n)
		for i := range s {
			s[i] = byte(0x20 + r.IntN(0x60)) // printable ASCII, '"' and '\\' included
		}
		for i := range s { // plain bytes only, as a baseline
			if s[i] == '"' || s[i] == '\\' {
				s[i] = 'x'
			}
		}
		if got, want := plainLen(s), n; got != want {
			t.Fatalf("plain run of %d: got %d", n, got)
		}
		for at := 0; at < n; at++ {
			for _, b := range stops {
				old := s[at]
				s[at] = b
				want := ref(s)
				if got := plainLen(s); got != want {
					t.Fatalf("len %d, %#x at %d: plainLen %d, want %d", n, b, at, got, want)
				}
				if got := plainGeneric(s); got != want {
					t.Fatalf("len %d, %#x at %d: plainGeneric %d, want %d", n, b, at, got, want)
				}
				s[at] = old
			}
		}
	}
	for range 2000 { // random bytes, where any can stop the run
		s := make([]byte, r.IntN(200))
		for i := range s {
			s[i] = byte(r.IntN(256))
			if r.IntN(8) != 0 {
				s[i] = 'A' + byte(r.IntN(26))
			}
		}
		if got, want := plainLen(s), ref(s); got != want {
			t.Fatalf("%q: plainLen %d, want %d", s, got, want)
		}
	}
}
