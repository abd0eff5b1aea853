package mailbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

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

// OpenRegular opens name (relative to root) for reading: it must be a
// regular file (symlinks are not followed) of at most max bytes, and the
// file opened must be the one checked (not one swapped in meanwhile).
// The returned FileInfo is the open file's.
func OpenRegular(root *os.Root, name string, max int64) (*os.File, os.FileInfo, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%v)", name, ErrNotRegular, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, nil, fmt.Errorf("%s: %w: %d bytes, limit %d", name, ErrTooBig, fi.Size(), max)
	}
	f, err := root.OpenFile(name, readFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi2, err := f.Stat()
	if err != nil || !os.SameFile(fi, fi2) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (replaced while opening)", name, ErrNotRegular)
	}
	if fi2.Size() > max {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w: %d bytes, limit %d", name, ErrTooBig, fi2.Size(), max)
	}
	return f, fi2, nil
}

// ErrLinked is returned for a slot that is a hard link: a name the file
// shares with another folder, perhaps outside the mailbox, whose content
// the game must not read as the engine's.
var ErrLinked = errors.New("file has other hard links")

// CheckSingleLink returns ErrLinked (wrapped, with the count) when the
// open file f has more than one name.
func CheckSingleLink(f *os.File) error {
	n, err := linkCount(f)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("%s: %w (%d names)", f.Name(), ErrLinked, n)
	}
	return nil
}
