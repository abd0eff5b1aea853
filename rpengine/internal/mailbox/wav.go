package mailbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gamelink-go/gamelink/internal/wav"
)

// WAV: the audio slots are PCM16 WAV files, read and written with the
// module's one codec, internal/wav.

// EncodeWAV returns a PCM16 WAV file holding pcm (little-endian samples,
// interleaved when channels > 1).
func EncodeWAV(pcm []byte, rate, channels int) []byte {
	b, err := wav.AppendHeader(make([]byte, 0, wav.HeaderSize+len(pcm)), wav.Format{SampleRate: rate, Channels: channels, BitsPerSample: 16}, int64(len(pcm)))
	if err != nil {
		panic("mailbox: EncodeWAV: " + err.Error()) // the mailbox's own constants and whole samples
	}
	return append(b, pcm...)
}

// Silent returns the slot placeholder: one silent PCM16 mono sample.
func Silent(rate int) []byte { return EncodeWAV([]byte{0, 0}, rate, 1) }

// WAV is a decoded PCM16 WAV file.
type WAV struct {
	Rate, Channels int
	PCM            []byte // little-endian samples; aliases the input
}

// ErrWAV is wrapped by the errors of DecodeWAV and ReadWAV.
var ErrWAV = errors.New("bad WAV file")

// DecodeWAV parses a PCM16 WAV file held in b, as ReadWAV reads one.
func DecodeWAV(b []byte) (WAV, error) {
	r := bytes.NewReader(b)
	f, n, err := readPCM16Header(r, int64(len(b)))
	if err != nil {
		return WAV{}, err
	}
	at := len(b) - r.Len()
	return WAV{Rate: f.SampleRate, Channels: f.Channels, PCM: b[at : at+int(n)]}, nil
}

// readPCM16Header reads a WAV file's header up to its samples and checks
// that they are 16-bit integer PCM.
func readPCM16Header(r io.Reader, size int64) (wav.Format, int64, error) {
	f, n, err := wav.ReadHeader(r, size)
	switch {
	case err != nil:
		return f, 0, fmt.Errorf("%w: %w", ErrWAV, err)
	case f.Float || f.BitsPerSample != 16:
		return f, 0, fmt.Errorf("%w: %d-bit %s samples, not 16-bit PCM", ErrWAV, f.BitsPerSample, map[bool]string{true: "float", false: "integer"}[f.Float])
	}
	return f, n, nil
}

// WAV16 is a PCM16 WAV file read by ReadWAV: its samples decoded, the
// file itself never held in memory.
type WAV16 struct {
	Rate, Channels int
	Samples        []int16 // interleaved when Channels > 1
	DataBytes      int64   // length of the data chunk
}

// ReadWAV reads a PCM16 WAV file of size bytes from r, streaming: the
// header goes through internal/wav's ReadHeader and a small buffer, and
// the data chunk is decoded straight into the samples, so reading a slot
// costs the samples alone (issue #16: a 64 MiB slot was read whole, then
// copied, about 128 MiB per segment). The data chunk is bounded by size,
// which the caller bounds.
func ReadWAV(r io.Reader, size int64) (WAV16, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	f, n, err := readPCM16Header(br, size)
	if err != nil {
		return WAV16{}, err
	}
	w := WAV16{Rate: f.SampleRate, Channels: f.Channels, DataBytes: n, Samples: make([]int16, n/2)}
	return w, readSamples(br, w.Samples)
}

// readSamples decodes little-endian PCM16 from r into s.
func readSamples(r io.Reader, s []int16) error {
	var buf [8 << 10]byte
	for len(s) > 0 {
		b := buf[:min(len(buf), 2*len(s))]
		if _, err := io.ReadFull(r, b); err != nil {
			return readErr(err)
		}
		for i := range len(b) / 2 {
			s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		s = s[len(b)/2:]
	}
	return nil
}

// readErr: a file shorter than its size said (it shrank while read).
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the file ended early (changed while read?)", ErrWAV)
	}
	return err
}
