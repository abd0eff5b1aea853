package audio

import (
	"errors"
	"io"

	"github.com/gamelink-go/gamelink/internal/wav"
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
// data then runs to the end). 16-bit samples s become s/32768, so
// [AppendWAV] writes them back exactly; float NaN becomes 0 and ±Inf ±1.
// Anything else malformed or unsupported is reported as a [*FormatError]
// with the byte offset.
func DecodeWAV(w *WAV, data []byte) error {
	f, err := wav.Parse(data)
	if err != nil {
		return fromWAVError(err)
	}
	*w = WAV{SampleRate: f.SampleRate, Channels: f.Channels, BitsPerSample: f.BitsPerSample, Float: f.Float, Samples: w.Samples[:0]}
	w.Samples = f.AppendFloat32(w.Samples)
	return nil
}

// fromWAVError turns the codec's error into this package's FormatError.
func fromWAVError(err error) error {
	var e *wav.Error
	if errors.As(err, &e) {
		return &FormatError{Offset: e.Offset, Reason: e.Reason, Unsupported: e.Unsupported}
	}
	return err
}

// AppendWAV appends a complete PCM16 WAV file (44-byte header, 16-byte fmt
// chunk) holding the interleaved float32 samples, converted as
// [AppendInt16] does. It fails when sampleRate or channels is not positive,
// samples is not whole frames or the data exceeds the 4 GiB RIFF limit.
func AppendWAV(dst []byte, sampleRate, channels int, samples []float32) ([]byte, error) {
	if channels < 1 || len(samples)%channels != 0 {
		return dst, formatErrorf(0, false, "%d samples is not a whole number of %d-channel frames", len(samples), channels)
	}
	dst, err := wav.AppendHeader(dst, wav.Format{SampleRate: sampleRate, Channels: channels, BitsPerSample: 16}, 2*int64(len(samples)))
	if err != nil {
		return dst, fromWAVError(err)
	}
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
