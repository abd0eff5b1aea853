//go:build arm64 && !purego

package audio

func int16ToFloat32AVX2(out []float32, src []int16) { float32Generic(out, src) }
