package audio

import (
	"fmt"
	"testing"
)

// BenchmarkKernels measures each assembly kernel against its pure-Go twin
// in the same run, on the inputs the package gives it (issue #30: a kernel
// stays only where it is at least 2x its Go code on a path that runs per
// audio chunk or per device callback; bench/README.md states each gain).
// dots: one 10 ms chunk's batch at 44.1 to 16 kHz (dotsAVX2 against
// dotsGeneric); fold: the same at 48 to 16 kHz (dotsFoldAVX2
// against folded.dots); int16: a 32 KiB reply chunk converted by
// Speaker.Enqueue (int16ToFloat32AVX2 against float32Generic). Without
// AVX2 (or with -tags purego) both variants run the Go code.
func BenchmarkKernels(b *testing.B) {
	for _, p := range []ratePair{{44100, 16000}, {48000, 16000}} {
		kind := "dots"
		if p.in%p.out == 0 {
			kind = "fold"
		}
		for _, generic := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/%d-%d/%s", kind, p.in, p.out, kernelName(generic)), func(b *testing.B) {
				r, err := NewResampler(p.in, p.out, 1)
				if err != nil {
					b.Fatal(err)
				}
				r.setKernel(generic)
				chunk := p.in / 100
				x := sine(float64(p.in), 1000, 0.5, chunk+r.taps)
				_, _ = r.Append(nil, x[:r.taps]) // history in place
				b.SetBytes(int64(4 * chunk))
				b.ReportAllocs()
				var dst []float32
				for b.Loop() {
					// One chunk's batch, as run plans it, without the copies.
					r.bufs[0] = append(r.bufs[0][:r.taps-1], x[r.taps:]...)
					pos, frac, row := r.pos, r.frac, r.row
					outs := int((int64(len(r.bufs[0])-1-pos)*int64(r.l)+int64(r.l-1-frac))/int64(r.m)) + 1
					dst = dst[:0]
					for range outs {
						dst = append(dst, 0)
					}
					r.plan(outs)
					r.filter(dst, r.bufs[0])
					r.pos, r.frac, r.row = pos, frac, row
				}
			})
		}
	}
	src := make([]int16, 16384) // a 32 KiB reply.audio.chunk
	for i := range src {
		src[i] = int16(i * 7)
	}
	out := make([]float32, len(src))
	for _, generic := range []bool{false, true} {
		b.Run("int16/"+kernelName(generic), func(b *testing.B) {
			b.SetBytes(int64(2 * len(src)))
			for b.Loop() {
				if generic || !hasAVX2 {
					float32Generic(out, src)
				} else {
					int16ToFloat32AVX2(out, src)
				}
			}
		})
	}
}

func kernelName(generic bool) string {
	if generic {
		return "go"
	}
	return "asm"
}
