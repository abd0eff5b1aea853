//go:build amd64 && !purego

package audio

// int16ToFloat32AVX2 is float32Generic with AVX2, 8 samples a step;
// len(src) must be a multiple of 8 and len(out) at least len(src). A
// reply's audio is converted once per sample played, and the scalar loop
// cost a third of what decoding its base64 did (bench/, issue #24).
//
//go:noescape
func int16ToFloat32AVX2(out []float32, src []int16)
