package audio

// Fuzz targets added by the hardening work (issue #9) for the wire's PCM
// decoding, which had none. (The base64 helpers and their target went with
// EventAudio in issue #17: rpengine encodes requests itself.)

import (
	"bytes"
	"testing"
)

// FuzzAppendDecode: no panic; s16 decodes to [-1, 1) and encodes back to
// the same bytes; f32 decodes only finite samples, which survive a round
// trip; on error dst is unchanged.
func FuzzAppendDecode(f *testing.F) {
	f.Add(uint8(0), []byte{0, 0, 0xff, 0x7f, 0, 0x80})
	f.Add(uint8(1), []byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f})
	f.Add(uint8(1), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, which uint8, src []byte) {
		enc := []Encoding{EncodingS16LE, EncodingF32LE}[which%2]
		dst := []float32{0.5}
		out, err := AppendDecode(dst, enc, src)
		if err != nil {
			if len(out) != 1 {
				t.Fatalf("error with %d samples appended", len(out)-1)
			}
			return
		}
		samples := out[1:]
		if len(samples) != len(src)/enc.BytesPerSample() {
			t.Fatalf("%d samples from %d bytes", len(samples), len(src))
		}
		back := AppendEncode(nil, enc, samples)
		if enc == EncodingS16LE {
			for _, s := range samples {
				if s < -1 || s >= 1 {
					t.Fatalf("sample %v out of range", s)
				}
			}
			if !bytes.Equal(back, src) {
				t.Fatalf("s16 round trip changed the bytes")
			}
			return
		}
		again, err := AppendDecode(nil, enc, back)
		if err != nil || len(again) != len(samples) {
			t.Fatalf("f32 round trip: %v", err)
		}
		for i := range again {
			if again[i] != samples[i] {
				t.Fatalf("f32 sample %d: %v != %v", i, again[i], samples[i])
			}
		}
	})
}
