package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/internal/wav"
)

// endless is a body that never ends, counting the bytes read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// header16k returns the 44-byte header of a 16 kHz mono PCM16 file whose
// data chunk declares size bytes.
func header16k(t *testing.T, size uint32) []byte {
	h, err := wav.AppendHeader(nil, wav.Format{SampleRate: CaptureRate, Channels: 1, BitsPerSample: 16}, 2)
	testutil.Success(t, err)
	binary.LittleEndian.PutUint32(h[40:], size)
	return h
}

// Issue #31: a header claiming a 4 GiB data chunk before an endless body
// was read up to ReadWAV's 1 GiB limit (2.1 GiB of RSS). A declared size
// past what the caller can use is refused before a sample is read, and of
// a streamed one (0xFFFFFFFF) no more than that is read. Bounded in bytes
// read, counted.
func TestReadWAV_boundedInBytes(t *testing.T) {
	t.Parallel()
	const speech = 30 * CaptureRate * 2 // 30 s of 16 kHz mono PCM16: 960 000 bytes
	cases := []struct {
		name     string
		declared uint32
		max      time.Duration
		maxRead  int64 // bytes of the body ReadWAV may read
	}{
		{"4 GiB declared", 0xFFFFFFFE, 0, 0},
		{"4 GiB streamed", 0xFFFFFFFF, 0, speech + 1},
		{"30 s and a frame declared", speech + 2, 0, 0},
		{"2 s declared, 1 s usable", 2 * 2 * CaptureRate, time.Second, 0},
		{"streamed, 1 s usable", 0xFFFFFFFF, time.Second, 2*CaptureRate + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := &endless{}
			_, err := ReadWAV(io.MultiReader(bytes.NewReader(header16k(t, c.declared)), body), c.max)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("ReadWAV: %v, want a *FormatError", err)
			}
			if body.n > c.maxRead {
				t.Fatalf("read %d bytes of the body, want at most %d (%v)", body.n, c.maxRead, err)
			}
			t.Log(err)
		})
	}
}

// ReadWAV takes what the caller can use whole: exactly maxDuration,
// declared or streamed, and a streamed file that ends before it.
func TestReadWAV_upToTheBound(t *testing.T) {
	t.Parallel()
	for _, declared := range []uint32{2 * CaptureRate, 0xFFFFFFFF} {
		body := bytes.Repeat([]byte{0, 0x40}, CaptureRate) // 1 s at 0.5
		for _, max := range []time.Duration{time.Second, 2 * time.Second} {
			w, err := ReadWAV(io.MultiReader(bytes.NewReader(header16k(t, declared)), bytes.NewReader(body)), max)
			testutil.Success(t, err)
			testutil.Equal(t, "frames", w.Frames(), CaptureRate)
			testutil.Equal(t, "last sample", w.Samples[len(w.Samples)-1], float32(0.5))
		}
	}
	// A streamed file may end inside a frame only as an error, and a
	// declared one not before its size.
	stereo, _ := wav.AppendHeader(nil, wav.Format{SampleRate: CaptureRate, Channels: 2, BitsPerSample: 16}, 8)
	binary.LittleEndian.PutUint32(stereo[40:], 0xFFFFFFFF)
	_, err := ReadWAV(bytes.NewReader(append(stereo, 1, 2, 3, 4, 5, 6)), 0)
	var fe *FormatError
	testutil.Equal(t, "partial frame is a FormatError", errors.As(err, &fe), true)
	_, err = ReadWAV(bytes.NewReader(append(header16k(t, 8), 1, 2)), 0)
	testutil.Equal(t, "short data is a FormatError", errors.As(err, &fe), true)
}

// The chunks before the samples of a stream are bounded too: a LIST chunk
// claiming 4 GiB is refused from its header.
func TestReadWAV_boundedHeader(t *testing.T) {
	t.Parallel()
	h := header16k(t, 2)
	file := append([]byte{}, h[:36]...)
	file = append(file, "LIST\xfe\xff\xff\xff"...)
	body := &endless{}
	_, err := ReadWAV(io.MultiReader(bytes.NewReader(file), body), 0)
	var fe *FormatError
	if !errors.As(err, &fe) || body.n != 0 {
		t.Fatalf("ReadWAV: %v after %d bytes of the chunk, want a *FormatError before any", err, body.n)
	}
}
