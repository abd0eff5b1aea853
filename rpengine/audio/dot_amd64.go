//go:build amd64 && !purego

package audio

import "golang.org/x/sys/cpu"

// dotAVX2 is dotGeneric with AVX2 and FMA: 4×8 float32 lanes per step.
// Its sums are rounded differently (fused multiply-adds, another order),
// so it agrees with dotGeneric to float32 precision, not bit for bit.
//
//go:noescape
func dotAVX2(a, b []float32) float32

// hasAVX2 selects the assembly kernel; without AVX2 and FMA (or with the
// purego tag) the pure-Go kernel runs.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
