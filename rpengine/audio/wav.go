package audio

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"slices"
)

// WAV is a decoded WAV file.
type WAV struct {
	// SampleRate is the frame rate in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// BitsPerSample is the stored sample size (8, 16, 24, 32 or 64).
	BitsPerSample int
	// Float is true for IEEE float data.
	Float bool
	// Samples holds the interleaved samples as float32 in [-1, 1].
	Samples []float32
}

// Frames returns the number of frames in w.Samples.
func (w *WAV) Frames() int {
	if w.Channels <= 0 {
		return 0
	}
	return len(w.Samples) / w.Channels
}

// maxWAVBytes bounds what ReadWAV reads: 1 GiB, far above any speech clip.
const maxWAVBytes = 1 << 30

// ReadWAV reads a whole WAV file from r (at most 1 GiB) and decodes it with
// [DecodeWAV].
func ReadWAV(r io.Reader) (*WAV, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxWAVBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxWAVBytes {
		return nil, formatErrorf(maxWAVBytes, true, "file larger than %d bytes", maxWAVBytes)
	}
	w := new(WAV)
	if err := DecodeWAV(w, data); err != nil {
		return nil, err
	}
	return w, nil
}

// DecodeWAV parses the RIFF/WAVE file in data into w, reusing the capacity
// of w.Samples, so decoding files of a steady size does not allocate.
//
// It accepts integer PCM of 8, 16, 24 and 32 bits and IEEE float of 32 and
// 64 bits, in plain or WAVE_FORMAT_EXTENSIBLE `fmt ` chunks (16, 18 or 40
// bytes, or longer), skips every other chunk (fact, LIST, cue, bext…), honours
// the pad byte after odd-sized chunks, and tolerates a missing final pad
// byte, a wrong RIFF size and a data size of 0xFFFFFFFF (streamed files; the
// data then runs to the end). Anything else malformed or unsupported is
// reported as a [*FormatError] with the byte offset.
func DecodeWAV(w *WAV, data []byte) error {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		if len(data) >= 4 && (string(data[0:4]) == "RF64" || string(data[0:4]) == "RIFX") {
			return formatErrorf(0, true, "%s files are not supported", data[0:4])
		}
		return formatErrorf(0, false, "not a RIFF/WAVE file")
	}
	var fmtc wavFormat
	haveFmt := false
	var pcm []byte
	var pcmOff int64
	off := 12
	for off+8 <= len(data) && (pcm == nil || !haveFmt) {
		id := [4]byte(data[off : off+4])
		size := int64(binary.LittleEndian.Uint32(data[off+4:]))
		body := int64(off + 8)
		if id == [4]byte{'d', 'a', 't', 'a'} && size == 0xFFFFFFFF {
			size = int64(len(data)) - body
		}
		if body+size > int64(len(data)) {
			return formatErrorf(int64(off), false, "chunk %q claims %d bytes but only %d remain", id, size, int64(len(data))-body)
		}
		switch string(id[:]) {
		case "fmt ":
			f, err := parseWAVFormat(data[body:body+size], body)
			if err != nil {
				return err
			}
			fmtc, haveFmt = f, true
		case "data":
			if pcm == nil {
				pcm, pcmOff = data[body:body+size], body
			}
		}
		off = int(body + size + size&1)
	}
	if !haveFmt {
		return formatErrorf(int64(off), false, "no fmt chunk")
	}
	if pcm == nil {
		return formatErrorf(int64(off), false, "no data chunk")
	}
	if len(pcm)%fmtc.blockAlign != 0 {
		return formatErrorf(pcmOff+int64(len(pcm)), false, "data size %d is not a whole number of %d-byte frames", len(pcm), fmtc.blockAlign)
	}
	*w = WAV{SampleRate: fmtc.rate, Channels: fmtc.channels, BitsPerSample: fmtc.bits, Float: fmtc.float, Samples: w.Samples[:0]}
	w.Samples = appendWAVSamples(w.Samples, pcm, &fmtc)
	return nil
}

type wavFormat struct {
	rate, channels, bits, blockAlign int
	float                            bool
}

const (
	wavePCM        = 1
	waveFloat      = 3
	waveExtensible = 0xFFFE
)

// ksdataGUIDTail is bytes 2..15 of the KSDATAFORMAT_SUBTYPE_* GUIDs; bytes
// 0..1 hold the format tag.
var ksdataGUIDTail = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

func parseWAVFormat(c []byte, off int64) (wavFormat, error) {
	if len(c) < 16 {
		return wavFormat{}, formatErrorf(off, false, "fmt chunk is %d bytes, want at least 16", len(c))
	}
	le := binary.LittleEndian
	tag := int(le.Uint16(c[0:]))
	f := wavFormat{
		channels:   int(le.Uint16(c[2:])),
		rate:       int(le.Uint32(c[4:])),
		blockAlign: int(le.Uint16(c[12:])),
		bits:       int(le.Uint16(c[14:])),
	}
	if tag == waveExtensible {
		if len(c) < 40 {
			return f, formatErrorf(off, false, "WAVE_FORMAT_EXTENSIBLE fmt chunk is %d bytes, want 40", len(c))
		}
		valid := int(le.Uint16(c[18:]))
		if valid > f.bits {
			return f, formatErrorf(off+18, false, "valid bits %d exceed container bits %d", valid, f.bits)
		}
		if !bytes.Equal(c[26:40], ksdataGUIDTail) {
			return f, formatErrorf(off+24, true, "extensible sub-format GUID is not PCM or IEEE float")
		}
		tag = int(le.Uint16(c[24:]))
	}
	switch {
	case tag == wavePCM && (f.bits == 8 || f.bits == 16 || f.bits == 24 || f.bits == 32):
	case tag == waveFloat && (f.bits == 32 || f.bits == 64):
		f.float = true
	case tag == wavePCM || tag == waveFloat:
		return f, formatErrorf(off+14, true, "%d-bit samples with format tag %d", f.bits, tag)
	default:
		return f, formatErrorf(off, true, "format tag 0x%04X (only PCM and IEEE float are decoded)", tag)
	}
	if f.channels < 1 || f.channels > 64 {
		return f, formatErrorf(off+2, false, "channel count %d outside 1..64", f.channels)
	}
	if f.rate < 1 || f.rate > 1_000_000 {
		return f, formatErrorf(off+4, false, "sample rate %d Hz outside 1..1000000", f.rate)
	}
	if f.blockAlign != f.channels*f.bits/8 {
		return f, formatErrorf(off+12, false, "block align %d, want %d for %d channels of %d bits", f.blockAlign, f.channels*f.bits/8, f.channels, f.bits)
	}
	return f, nil
}

func appendWAVSamples(dst []float32, pcm []byte, f *wavFormat) []float32 {
	bps := f.bits / 8
	n := len(pcm) / bps
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	le := binary.LittleEndian
	switch {
	case f.float && bps == 4:
		for i := range out {
			out[i] = sanitize(math.Float32frombits(le.Uint32(pcm[4*i:])))
		}
	case f.float:
		for i := range out {
			out[i] = sanitize(float32(math.Float64frombits(le.Uint64(pcm[8*i:]))))
		}
	case bps == 1:
		for i := range out {
			out[i] = float32(int(pcm[i])-128) * (1.0 / 128)
		}
	case bps == 2:
		decodeS16(out, pcm)
	case bps == 3:
		for i := range out {
			p := pcm[3*i:]
			v := int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8
			out[i] = float32(v) * (1.0 / (1 << 23))
		}
	default:
		for i := range out {
			out[i] = float32(float64(int32(le.Uint32(pcm[4*i:]))) * (1.0 / (1 << 31)))
		}
	}
	return dst
}

// sanitize maps NaN and ±Inf, which a float WAV may carry, to 0 and ±1 so
// they cannot poison a resampler's state.
func sanitize(v float32) float32 {
	switch {
	case v != v:
		return 0
	case v > 1e30:
		return 1
	case v < -1e30:
		return -1
	}
	return v
}

// AppendWAV appends a complete PCM16 WAV file (44-byte header, 16-byte fmt
// chunk) holding the interleaved float32 samples, converted as
// [AppendInt16] does. It fails when sampleRate or channels is not positive,
// samples is not whole frames or the data exceeds the 4 GiB RIFF limit.
func AppendWAV(dst []byte, sampleRate, channels int, samples []float32) ([]byte, error) {
	if sampleRate < 1 || sampleRate > 1_000_000 || channels < 1 || channels > 64 {
		return dst, formatErrorf(0, false, "cannot write %d Hz, %d channels", sampleRate, channels)
	}
	if len(samples)%channels != 0 {
		return dst, formatErrorf(0, false, "%d samples is not a whole number of %d-channel frames", len(samples), channels)
	}
	dataBytes := 2 * len(samples)
	if int64(dataBytes)+36 > math.MaxUint32 {
		return dst, formatErrorf(0, true, "%d bytes of data exceed the WAV size limit", dataBytes)
	}
	le := binary.LittleEndian
	dst = append(dst, "RIFF"...)
	dst = le.AppendUint32(dst, uint32(36+dataBytes))
	dst = append(dst, "WAVEfmt "...)
	dst = le.AppendUint32(dst, 16)
	dst = le.AppendUint16(dst, wavePCM)
	dst = le.AppendUint16(dst, uint16(channels))
	dst = le.AppendUint32(dst, uint32(sampleRate))
	dst = le.AppendUint32(dst, uint32(sampleRate*channels*2))
	dst = le.AppendUint16(dst, uint16(channels*2))
	dst = le.AppendUint16(dst, 16)
	dst = append(dst, "data"...)
	dst = le.AppendUint32(dst, uint32(dataBytes))
	return AppendEncode(dst, EncodingS16LE, samples), nil
}

// WriteWAV writes a PCM16 WAV file holding samples to w (see [AppendWAV]).
func WriteWAV(w io.Writer, sampleRate, channels int, samples []float32) error {
	b, err := AppendWAV(nil, sampleRate, channels, samples)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
