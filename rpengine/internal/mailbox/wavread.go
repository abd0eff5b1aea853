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

// ReadWAV reads a PCM16 WAV file of size bytes from r as DecodeWAV
// parses one (its differential fuzz test holds them equal), streaming: the
// header goes through a small buffer and the data chunk is decoded
// straight into the samples, so reading a slot costs the samples alone
// (issue #16: a 64 MiB slot was read whole, then copied, about 128 MiB
// per segment). The data chunk is bounded by size, which the caller
// bounds.
func ReadWAV(r io.Reader, size int64) (WAV16, error) {
	var w WAV16
	br := bufio.NewReaderSize(r, 32<<10)
	var hdr [16]byte
	if size < 12 {
		return w, fmt.Errorf("%w: no RIFF/WAVE header", ErrWAV)
	}
	if _, err := io.ReadFull(br, hdr[:12]); err != nil {
		return w, readErr(err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return w, fmt.Errorf("%w: no RIFF/WAVE header", ErrWAV)
	}
	left := size - 12
	fmtSeen := false
	for left >= 8 {
		if _, err := io.ReadFull(br, hdr[:8]); err != nil {
			return w, readErr(err)
		}
		left -= 8
		id, n := string(hdr[0:4]), int64(binary.LittleEndian.Uint32(hdr[4:]))
		if n > left {
			return w, fmt.Errorf("%w: chunk %q of %d bytes overruns the file", ErrWAV, id, n)
		}
		switch id {
		case "fmt ":
			if n < 16 {
				return w, fmt.Errorf("%w: fmt chunk of %d bytes", ErrWAV, n)
			}
			if _, err := io.ReadFull(br, hdr[:16]); err != nil {
				return w, readErr(err)
			}
			if f := binary.LittleEndian.Uint16(hdr[0:]); f != 1 {
				return w, fmt.Errorf("%w: format %d, not PCM", ErrWAV, f)
			}
			if bits := binary.LittleEndian.Uint16(hdr[14:]); bits != 16 {
				return w, fmt.Errorf("%w: %d bits per sample, not 16", ErrWAV, bits)
			}
			w.Channels = int(binary.LittleEndian.Uint16(hdr[2:]))
			w.Rate = int(binary.LittleEndian.Uint32(hdr[4:]))
			fmtSeen = true
			left -= 16
			n -= 16
		case "data":
			if !fmtSeen {
				return w, fmt.Errorf("%w: data before fmt", ErrWAV)
			}
			if n%2 != 0 {
				return w, fmt.Errorf("%w: odd data length %d", ErrWAV, n)
			}
			w.DataBytes = n
			w.Samples = make([]int16, n/2)
			return w, readSamples(br, w.Samples)
		}
		skip := n + n&1
		if skip > left {
			break // a pad byte past the end: no data chunk follows
		}
		if _, err := br.Discard(int(skip)); err != nil {
			return w, readErr(err)
		}
		left -= skip
	}
	return w, fmt.Errorf("%w: no data chunk", ErrWAV)
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
