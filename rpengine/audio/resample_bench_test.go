package audio

import (
	"fmt"
	"testing"
)

// BenchmarkResampler converts one second of mono audio in 10 ms chunks
// and reports x realtime (seconds of audio per second of CPU), with the
// fastest kernel and with the pure-Go one. Under qemu-user (the arm64
// tests of CI) the figures are emulation, not a speed measurement.
func BenchmarkResampler(b *testing.B) {
	for _, p := range []ratePair{{48000, 16000}, {44100, 16000}, {44100, 48000}} {
		for _, generic := range []bool{false, true} {
			name := fmt.Sprintf("%d-%d", p.in, p.out)
			if generic {
				name += "/go"
			} else if hasDotsAsm {
				name += "/asm" // AVX2 on amd64
			}
			b.Run(name, func(b *testing.B) {
				r, err := NewResampler(p.in, p.out, 1)
				if err != nil {
					b.Fatal(err)
				}
				r.setKernel(generic)
				x := sine(float64(p.in), 1000, 0.5, p.in)
				chunk := p.in / 100
				dst := make([]float32, 0, r.MaxOutFrames(chunk))
				b.ReportAllocs()
				b.SetBytes(int64(4 * len(x)))
				b.ResetTimer()
				for range b.N {
					for i := 0; i+chunk <= len(x); i += chunk {
						dst, _ = r.Append(dst[:0], x[i:i+chunk])
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
			})
		}
	}
}
