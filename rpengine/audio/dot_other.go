//go:build !amd64 || purego

package audio

const hasDotsAsm, hasAVX2 = false, false

// No folded assembly kernel here: the assembly kernel takes the plain row.
const hasFoldAsm = false

func (f *folded) dotsAsm(out []float32, stride int, buf []float32, wins []int32) {
	f.dots(out, stride, buf, wins)
}

func dotsAsm(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	dotsGeneric(out, stride, coef, taps, buf, rows, wins)
}

func int16ToFloat32AVX2(out []float32, src []int16) { float32Generic(out, src) }
