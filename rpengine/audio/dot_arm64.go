//go:build arm64 && !purego

package audio

// dotsNEON is dotsGeneric with NEON: 4×4 float32 lanes and fused
// multiply-adds per step. Like the AVX2 kernel it rounds differently from
// dotsGeneric, so they agree to float32 precision, not bit for bit.
//
//go:noescape
func dotsNEON(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32)

// Every arm64 CPU has NEON (Advanced SIMD is mandatory in ARMv8-A).
const hasDotsAsm, hasAVX2 = true, false

// No folded assembly kernel here: the assembly kernel takes the plain row.
const hasFoldAsm = false

func (f *folded) dotsAsm(out []float32, stride int, buf []float32, wins []int32) {
	f.dots(out, stride, buf, wins)
}

func dotsAsm(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	dotsNEON(out, stride, coef, taps, buf, rows, wins)
}
