//go:build amd64 && !purego

package audio

import "golang.org/x/sys/cpu"

// dotsAVX2 is dotsGeneric with AVX2 and FMA: 4×8 float32 lanes per step.
// Its sums are rounded differently (fused multiply-adds, another order),
// so it agrees with dotsGeneric to float32 precision, not bit for bit.
//
//go:noescape
func dotsAVX2(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32)

// hasDotsAsm selects the assembly kernel; without AVX2 and FMA (or with
// the purego tag) the pure-Go kernel runs.
var hasDotsAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX2 also selects the other AVX2 kernels of the package.
var hasAVX2 = hasDotsAsm

// dotsFoldAVX2 is the folded kernel of a one-phase row with AVX2 and FMA,
// on the row's wide form (see folded.wide). It agrees with folded.dots
// to float32 precision, not bit for bit.
//
//go:noescape
func dotsFoldAVX2(out []float32, stride int, wide []float32, taps int, buf []float32, wins []int32)

// hasFoldAsm selects dotsFoldAVX2 for one-phase rows.
var hasFoldAsm = hasDotsAsm

// dotsAsm is folded.dots with the assembly kernel (see hasFoldAsm).
func (f *folded) dotsAsm(out []float32, stride int, buf []float32, wins []int32) {
	dotsFoldAVX2(out, stride, f.wide, f.taps, buf, wins)
}

func dotsAsm(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	dotsAVX2(out, stride, coef, taps, buf, rows, wins)
}
