package stream

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Test_appendSamples holds the little-endian copy path to the portable
// conversion, for every length up to a few hundred bytes and onto a
// non-empty dst.
func Test_appendSamples(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for n := 0; n < 300; n++ {
		b := make([]byte, 2*n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		prefix := []int16{-1, 7}
		got := appendSamples(slices.Clone(prefix), b)
		want := make([]int16, n)
		decodeSamples(want, b)
		want = append(slices.Clone(prefix), want...)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: got %v, want %v", n, got, want)
		}
	}
	// A known value: bytes 0x34 0x12 are the sample 0x1234, 0xff 0xff is -1.
	if got := appendSamples(nil, []byte{0x34, 0x12, 0xff, 0xff}); !slices.Equal(got, []int16{0x1234, -1}) {
		t.Errorf("got %#v", got)
	}
}
