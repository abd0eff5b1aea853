//go:build !(amd64 || arm64) || purego

package audio

const hasDotsAsm, hasAVX2 = false, false

func dotsAsm(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32) {
	dotsGeneric(out, stride, coef, taps, buf, rows, wins)
}

func int16ToFloat32AVX2(out []float32, src []int16) { float32Generic(out, src) }
