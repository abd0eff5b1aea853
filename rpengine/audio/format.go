package audio

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Encoding is a PCM sample encoding as named on the RPEngine wire. Samples
// are little-endian and, for more than one channel, interleaved.
type Encoding int

const (
	// EncodingS16LE is signed 16-bit little-endian PCM ("pcm_s16le").
	EncodingS16LE Encoding = iota + 1
	// EncodingF32LE is IEEE 754 32-bit float little-endian PCM in [-1, 1]
	// ("pcm_f32le").
	EncodingF32LE
)

// String returns the wire name: "pcm_s16le" or "pcm_f32le".
func (e Encoding) String() string {
	switch e {
	case EncodingS16LE:
		return "pcm_s16le"
	case EncodingF32LE:
		return "pcm_f32le"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// ParseEncoding maps a wire name ("pcm_s16le", "pcm_f32le") to an Encoding.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "pcm_s16le":
		return EncodingS16LE, nil
	case "pcm_f32le":
		return EncodingF32LE, nil
	}
	return 0, formatErrorf(0, true, "unknown sample encoding %q (want pcm_s16le or pcm_f32le)", s)
}

// BytesPerSample is 2 for EncodingS16LE, 4 for EncodingF32LE and 0 for an
// invalid Encoding.
func (e Encoding) BytesPerSample() int {
	switch e {
	case EncodingS16LE:
		return 2
	case EncodingF32LE:
		return 4
	}
	return 0
}

// AppendDecode decodes the samples in src, encoded as enc, appends them to
// dst as float32 in [-1, 1) and returns the extended slice. An s16 sample s
// becomes s/32768, so [AppendEncode] restores it exactly. It does not
// allocate when dst has room. src must hold whole samples; float input must
// be finite. On error dst is returned unchanged with a [*FormatError].
func AppendDecode(dst []float32, enc Encoding, src []byte) ([]float32, error) {
	bps := enc.BytesPerSample()
	if bps == 0 {
		return dst, formatErrorf(0, true, "invalid sample encoding %d", int(enc))
	}
	if len(src)%bps != 0 {
		return dst, formatErrorf(int64(len(src)-len(src)%bps), false,
			"%d bytes is not a whole number of %s samples", len(src), enc)
	}
	n := len(src) / bps
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	if enc == EncodingS16LE {
		decodeS16(out, src)
		return dst, nil
	}
	for i := range out {
		v := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		if v-v != 0 { // NaN or ±Inf
			return dst[:start], formatErrorf(int64(4*i), false, "sample %d is not finite (%v)", i, v)
		}
		out[i] = v
	}
	return dst, nil
}

func decodeS16(out []float32, src []byte) {
	src = src[:2*len(out)]
	for i := range out {
		out[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:]))) * (1.0 / 32768)
	}
}

// AppendEncode encodes the float32 samples in src as enc and appends the
// bytes to dst. For s16, samples are scaled by 32768, rounded to nearest and
// clipped to [-32768, 32767]; NaN becomes 0. An invalid enc appends nothing.
func AppendEncode(dst []byte, enc Encoding, src []float32) []byte {
	bps := enc.BytesPerSample()
	start := len(dst)
	dst = slices.Grow(dst, bps*len(src))[:start+bps*len(src)]
	out := dst[start:]
	switch enc {
	case EncodingS16LE:
		for i, v := range src {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(toInt16(v)))
		}
	case EncodingF32LE:
		for i, v := range src {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	}
	return dst
}

func toInt16(v float32) int16 {
	x := v * 32768
	switch {
	case x >= 32767:
		return 32767
	case x <= -32768:
		return -32768
	case x != x:
		return 0
	case x >= 0:
		return int16(x + 0.5)
	default:
		return int16(x - 0.5)
	}
}

// AppendInt16 converts float32 samples to int16 (scaled by 32768, rounded,
// clipped, NaN to 0) and appends them to dst.
func AppendInt16(dst []int16, src []float32) []int16 {
	start := len(dst)
	dst = slices.Grow(dst, len(src))[:start+len(src)]
	out := dst[start:]
	for i, v := range src {
		out[i] = toInt16(v)
	}
	return dst
}

// AppendFloat32 converts int16 samples to float32 (s/32768) and appends
// them to dst.
func AppendFloat32(dst []float32, src []int16) []float32 {
	start := len(dst)
	dst = slices.Grow(dst, len(src))[:start+len(src)]
	out := dst[start:]
	n := 0
	if hasAVX2 {
		n = len(src) &^ 7
		int16ToFloat32AVX2(out[:n], src[:n])
	}
	float32Generic(out[n:], src[n:])
	return dst
}

// float32Generic is AppendFloat32's conversion in pure Go, the reference
// for the assembly kernel. Both are exact: an int16 is a float32, and
// 1/32768 is a power of two.
func float32Generic(out []float32, src []int16) {
	out = out[:len(src)]
	for i, v := range src {
		out[i] = float32(v) * (1.0 / 32768)
	}
}

// AppendDownmix averages each frame of the interleaved src (channels
// samples per frame) into one mono sample appended to dst. Averaging keeps
// a signal present in all channels at its level and cannot clip. channels 1
// copies src. src must hold whole frames.
func AppendDownmix(dst, src []float32, channels int) ([]float32, error) {
	if channels < 1 {
		return dst, formatErrorf(0, false, "channel count %d is not positive", channels)
	}
	if len(src)%channels != 0 {
		return dst, formatErrorf(0, false, "%d samples is not a whole number of %d-channel frames", len(src), channels)
	}
	frames := len(src) / channels
	start := len(dst)
	dst = slices.Grow(dst, frames)[:start+frames]
	out := dst[start:]
	switch channels {
	case 1:
		copy(out, src)
	case 2:
		src = src[:2*len(out)]
		for i := range out {
			out[i] = (src[2*i] + src[2*i+1]) * 0.5
		}
	default:
		scale := 1 / float32(channels)
		for i := range out {
			var s float32
			for _, v := range src[i*channels : (i+1)*channels] {
				s += v
			}
			out[i] = s * scale
		}
	}
	return dst, nil
}
