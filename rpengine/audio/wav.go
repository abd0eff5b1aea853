package audio

import (
	"errors"
	"io"
	"time"

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

// maxWAVBytes bounds the samples ReadWAV reads, whatever maxDuration
// says: 256 MiB (30 s of 96 kHz 8-channel 32-bit audio is 92 MB).
const maxWAVBytes = 256 << 20

// maxSpeech is the longest speech event RPEngine takes, ReadWAV's default.
const maxSpeech = 30 * time.Second

// ReadWAV reads a WAV file from r as a stream and decodes it as
// [DecodeWAV] does, keeping only the samples. maxDuration is the longest
// audio the caller can use; if it is not positive, 30 s, the longest
// speech event RPEngine takes (rpengine.ReplyRequest.Speech). A data chunk
// that declares more than maxDuration (or more than 256 MiB of samples) is
// refused with a [*FormatError] before a sample is read, and of a streamed
// file (data size 0xFFFFFFFF, the samples run to the end) at most that
// many bytes are read: one byte more fails. The chunks before the samples
// may hold at most 1 MiB, and the fmt chunk must come before the data
// chunk (a stream cannot go back; [DecodeWAV] takes either order). r is
// not read past the data chunk.
func ReadWAV(r io.Reader, maxDuration time.Duration) (*WAV, error) {
	if maxDuration <= 0 {
		maxDuration = maxSpeech
	}
	cr := &countingReader{r: r}
	f, n, err := wav.ReadHeader(cr, -1)
	if err != nil {
		return nil, fromWAVError(err)
	}
	frame := int64(f.FrameBytes())
	limit := min(framesOf(maxDuration, f.SampleRate), maxWAVBytes/frame) * frame
	if n > limit {
		return nil, formatErrorf(cr.n-8, false, "the data chunk declares %.1f s (%d bytes at %d Hz): at most %g s (and %d bytes) can be used",
			float64(n/frame)/float64(f.SampleRate), n, f.SampleRate, maxDuration.Seconds(), maxWAVBytes)
	}
	w := &WAV{SampleRate: f.SampleRate, Channels: f.Channels, BitsPerSample: f.BitsPerSample, Float: f.Float}
	if err := w.readSamples(cr, n, limit, frame); err != nil {
		return nil, err
	}
	return w, nil
}

// readSamples decodes the data chunk at r, of n bytes, or running to the
// end of r when n is -1 (then at most limit bytes: more fails). The
// samples grow with what arrives, not with what the header claims.
func (w *WAV) readSamples(cr *countingReader, n, limit, frame int64) error {
	f := wav.File{Format: wav.Format{SampleRate: w.SampleRate, Channels: w.Channels, BitsPerSample: w.BitsPerSample, Float: w.Float}}
	buf := make([]byte, (32<<10)/frame*frame+frame) // whole frames, at least one
	start := cr.n
	want := n
	if n < 0 {
		want = limit + 1
	}
	for read := int64(0); read < want; {
		k, err := io.ReadFull(cr, buf[:min(int64(len(buf)), want-read)])
		read += int64(k)
		whole := k / int(frame) * int(frame)
		f.Data = buf[:whole]
		w.Samples = f.AppendFloat32(w.Samples)
		switch {
		case n < 0 && read > limit:
			return formatErrorf(start+limit, false, "streamed data runs past the %d bytes the caller can use", limit)
		case err == nil:
			continue
		case err != io.EOF && err != io.ErrUnexpectedEOF:
			return err
		case n >= 0:
			return formatErrorf(cr.n, false, "the file ended early: the data chunk claims %d bytes, %d remain", n, read)
		case k != whole:
			return formatErrorf(cr.n, false, "data ends inside a %d-byte frame", frame)
		}
		return nil
	}
	return nil
}

// countingReader counts the bytes read through it: the offset for errors.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
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
