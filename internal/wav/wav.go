// Package wav is the module's one RIFF/WAVE codec, in pure Go (no cgo):
// rpengine/audio decodes and writes speech files with it, the file
// mailbox reads and writes its audio slots with it, and the demo writes
// its PCM16 files with [AppendHeader].
//
// [Parse] reads the chunk structure and returns the sample data as it is
// stored, without copying; [ReadHeader] does the same for a file read as a
// stream; [File.AppendFloat32] converts the data to float32 in [-1, 1]. [AppendHeader] writes the canonical 44-byte header of an
// integer PCM file, so a writer can stream the data and write the header
// (again) once the size is known.
//
// Errors are [*Error], with the byte offset of the problem.
package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// HeaderSize is the size in bytes of the header [AppendHeader] writes: the
// data starts at this offset.
const HeaderSize = 44

// Format describes the samples of a WAV file.
type Format struct {
	// SampleRate is the frame rate in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// BitsPerSample is the stored sample size (8, 16, 24, 32 or 64).
	BitsPerSample int
	// Float is true for IEEE float samples.
	Float bool
}

// FrameBytes returns the size of one frame (all channels) in bytes.
func (f Format) FrameBytes() int { return f.Channels * f.BitsPerSample / 8 }

// File is a parsed WAV file.
type File struct {
	Format
	// Data is the data chunk's bytes, little-endian samples, interleaved.
	// It aliases the input of [Parse].
	Data []byte
	// DataOffset is the offset of Data in the input.
	DataOffset int64
}

// Error describes malformed or unsupported input: what was wrong and the
// byte offset where it was found.
type Error struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int64
	// Reason says what was wrong, in lowercase.
	Reason string
	// Unsupported is true when the input is well formed but uses a
	// feature this codec does not decode (for example A-law).
	Unsupported bool
}

// Error implements error.
func (e *Error) Error() string {
	kind := "malformed"
	if e.Unsupported {
		kind = "unsupported"
	}
	return fmt.Sprintf("wav: %s input at byte %d: %s", kind, e.Offset, e.Reason)
}

func errorf(off int64, unsupported bool, format string, args ...any) *Error {
	return &Error{Offset: off, Reason: fmt.Sprintf(format, args...), Unsupported: unsupported}
}

// Parse reads the RIFF/WAVE file in b and returns its format and data
// chunk, which aliases b.
//
// It accepts integer PCM of 8, 16, 24 and 32 bits and IEEE float of 32 and
// 64 bits, in plain or WAVE_FORMAT_EXTENSIBLE `fmt ` chunks (16, 18 or 40
// bytes, or longer), in either order with the data chunk; skips every other
// chunk (fact, LIST, cue, bext…); honours the pad byte after odd-sized
// chunks; and tolerates a missing final pad byte, a wrong RIFF size and a
// data size of 0xFFFFFFFF (streamed files: the data then runs to the end),
// as files written by recorders and engines have. Anything else malformed
// or unsupported is an [*Error].
func Parse(b []byte) (File, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		if len(b) >= 4 && (string(b[0:4]) == "RF64" || string(b[0:4]) == "RIFX") {
			return File{}, errorf(0, true, "%s files are not supported", b[0:4])
		}
		return File{}, errorf(0, false, "not a RIFF/WAVE file")
	}
	var f File
	haveFmt := false
	off := 12
	for off+8 <= len(b) && (f.Data == nil || !haveFmt) {
		id := [4]byte(b[off : off+4]) // an array: no allocation per chunk
		size := int64(binary.LittleEndian.Uint32(b[off+4:]))
		body := int64(off + 8)
		if id == [4]byte{'d', 'a', 't', 'a'} && size == 0xFFFFFFFF {
			size = int64(len(b)) - body
		}
		if body+size > int64(len(b)) {
			return File{}, errorf(int64(off), false, "chunk %q claims %d bytes but only %d remain", id, size, int64(len(b))-body)
		}
		switch string(id[:]) {
		case "fmt ":
			format, err := parseFormat(b[body:body+size], body)
			if err != nil {
				return File{}, err
			}
			f.Format, haveFmt = format, true
		case "data":
			if f.Data == nil {
				f.Data, f.DataOffset = b[body:body+size:body+size], body
			}
		}
		off = int(body + size + size&1)
	}
	switch {
	case !haveFmt:
		return File{}, errorf(int64(off), false, "no fmt chunk")
	case f.Data == nil:
		return File{}, errorf(int64(off), false, "no data chunk")
	case len(f.Data)%f.FrameBytes() != 0:
		return File{}, errorf(f.DataOffset+int64(len(f.Data)), false, "data size %d is not a whole number of %d-byte frames", len(f.Data), f.FrameBytes())
	}
	return f, nil
}

const (
	tagPCM        = 1
	tagFloat      = 3
	tagExtensible = 0xFFFE
)

// ksdataGUIDTail is bytes 2..15 of the KSDATAFORMAT_SUBTYPE_* GUIDs; bytes
// 0..1 hold the format tag.
var ksdataGUIDTail = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// parseFormat reads a fmt chunk c found at offset off.
func parseFormat(c []byte, off int64) (Format, error) {
	if len(c) < 16 {
		return Format{}, errorf(off, false, "fmt chunk is %d bytes, want at least 16", len(c))
	}
	le := binary.LittleEndian
	tag := int(le.Uint16(c[0:]))
	f := Format{
		Channels:      int(le.Uint16(c[2:])),
		SampleRate:    int(le.Uint32(c[4:])),
		BitsPerSample: int(le.Uint16(c[14:])),
	}
	blockAlign := int(le.Uint16(c[12:]))
	if tag == tagExtensible {
		if len(c) < 40 {
			return f, errorf(off, false, "WAVE_FORMAT_EXTENSIBLE fmt chunk is %d bytes, want 40", len(c))
		}
		if valid := int(le.Uint16(c[18:])); valid > f.BitsPerSample {
			return f, errorf(off+18, false, "valid bits %d exceed container bits %d", valid, f.BitsPerSample)
		}
		if !bytes.Equal(c[26:40], ksdataGUIDTail) {
			return f, errorf(off+24, true, "extensible sub-format GUID is not PCM or IEEE float")
		}
		tag = int(le.Uint16(c[24:]))
	}
	switch bits := f.BitsPerSample; {
	case tag == tagPCM && (bits == 8 || bits == 16 || bits == 24 || bits == 32):
	case tag == tagFloat && (bits == 32 || bits == 64):
		f.Float = true
	case tag == tagPCM || tag == tagFloat:
		return f, errorf(off+14, true, "%d-bit samples with format tag %d", bits, tag)
	default:
		return f, errorf(off, true, "format tag 0x%04X (only PCM and IEEE float are decoded)", tag)
	}
	if f.Channels < 1 || f.Channels > 64 {
		return f, errorf(off+2, false, "channel count %d outside 1..64", f.Channels)
	}
	if f.SampleRate < 1 || f.SampleRate > 1_000_000 {
		return f, errorf(off+4, false, "sample rate %d Hz outside 1..1000000", f.SampleRate)
	}
	if blockAlign != f.FrameBytes() {
		return f, errorf(off+12, false, "block align %d, want %d for %d channels of %d bits", blockAlign, f.FrameBytes(), f.Channels, f.BitsPerSample)
	}
	return f, nil
}

// AppendFloat32 converts the samples of f.Data to float32 in [-1, 1] and
// appends them to dst, interleaved as stored: 8-bit as (v-128)/128, 16-bit
// as v/32768 (so writing them back as PCM16 is exact), 24 and 32-bit
// scaled likewise; float samples as they are, with NaN mapped to 0 and
// ±Inf to ±1 so they cannot poison a filter. It does not allocate when
// dst has room.
func (f *File) AppendFloat32(dst []float32) []float32 {
	bps := f.BitsPerSample / 8
	if bps == 0 {
		return dst
	}
	pcm := f.Data
	n := len(pcm) / bps
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	le := binary.LittleEndian
	switch {
	case f.Float && bps == 4:
		for i := range out {
			out[i] = sanitize(math.Float32frombits(le.Uint32(pcm[4*i:])))
		}
	case f.Float:
		for i := range out {
			out[i] = sanitize(float32(math.Float64frombits(le.Uint64(pcm[8*i:]))))
		}
	case bps == 1:
		for i := range out {
			out[i] = float32(int(pcm[i])-128) * (1.0 / 128)
		}
	case bps == 2:
		pcm = pcm[:2*n]
		for i := range out {
			out[i] = float32(int16(le.Uint16(pcm[2*i:]))) * (1.0 / 32768)
		}
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

// sanitize maps NaN and ±Inf to 0 and ±1.
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

// AppendHeader appends the canonical 44-byte header (RIFF, a 16-byte
// `fmt ` chunk, the data chunk's id and size) of an integer PCM file of
// dataBytes bytes of samples in format f, which must be integer PCM of 8,
// 16, 24 or 32 bits. The samples follow the header, little-endian and
// interleaved. It fails, appending nothing, when f is not such a format,
// dataBytes is not whole frames, or the file would exceed the 4 GiB RIFF
// limit.
func AppendHeader(dst []byte, f Format, dataBytes int64) ([]byte, error) {
	switch {
	case f.Float || (f.BitsPerSample != 8 && f.BitsPerSample != 16 && f.BitsPerSample != 24 && f.BitsPerSample != 32):
		return dst, errorf(0, true, "cannot write %d-bit samples (float %v); only integer PCM", f.BitsPerSample, f.Float)
	case f.SampleRate < 1 || f.SampleRate > 1_000_000 || f.Channels < 1 || f.Channels > 64:
		return dst, errorf(0, false, "cannot write %d Hz, %d channels", f.SampleRate, f.Channels)
	case dataBytes < 0 || dataBytes%int64(f.FrameBytes()) != 0:
		return dst, errorf(0, false, "%d bytes is not a whole number of %d-byte frames", dataBytes, f.FrameBytes())
	case dataBytes+HeaderSize-8 > math.MaxUint32:
		return dst, errorf(0, true, "%d bytes of data exceed the WAV size limit", dataBytes)
	}
	le := binary.LittleEndian
	frame := f.FrameBytes()
	dst = append(dst, "RIFF"...)
	dst = le.AppendUint32(dst, uint32(dataBytes+HeaderSize-8))
	dst = append(dst, "WAVEfmt "...)
	dst = le.AppendUint32(dst, 16)
	dst = le.AppendUint16(dst, tagPCM)
	dst = le.AppendUint16(dst, uint16(f.Channels))
	dst = le.AppendUint32(dst, uint32(f.SampleRate))
	dst = le.AppendUint32(dst, uint32(f.SampleRate*frame))
	dst = le.AppendUint16(dst, uint16(frame))
	dst = le.AppendUint16(dst, uint16(f.BitsPerSample))
	dst = append(dst, "data"...)
	return le.AppendUint32(dst, uint32(dataBytes)), nil
}

// MaxStreamHeader bounds the chunks before the samples of a file that
// [ReadHeader] reads as a stream of unknown size: 1 MiB, far above what
// recorders and engines write there (fmt, fact, LIST, bext: a few hundred
// bytes).
const MaxStreamHeader = 1 << 20

// ReadHeader reads a RIFF/WAVE file from r, whose size in bytes is size,
// up to the start of its data chunk, and returns the format and the data
// chunk's size in bytes: r is then at the first byte of the samples. It is
// [Parse] for a file read as a stream, so that a large file need not be
// held whole: the same formats, tolerances and errors, except that the
// fmt chunk must come before the data chunk (a stream cannot go back to
// the data), as every writer of canonical files puts it. Of other chunks
// it reads only their headers.
//
// A negative size means the size is not known (a pipe, a socket): chunk
// sizes are then not checked against it, the chunks before the samples
// may hold at most [MaxStreamHeader] bytes (a larger one is refused before
// it is read, so r is read no further), and a data chunk of the streamed
// size 0xFFFFFFFF is returned as -1: the samples run to the end of r. The
// caller bounds what it reads of them.
func ReadHeader(r io.Reader, size int64) (Format, int64, error) {
	var hdr [12]byte
	if size >= 0 && size < 12 {
		return Format{}, 0, errorf(0, false, "not a RIFF/WAVE file")
	}
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Format{}, 0, short(0, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		if string(hdr[0:4]) == "RF64" || string(hdr[0:4]) == "RIFX" {
			return Format{}, 0, errorf(0, true, "%s files are not supported", hdr[0:4])
		}
		return Format{}, 0, errorf(0, false, "not a RIFF/WAVE file")
	}
	stream := size < 0
	if stream {
		size = MaxStreamHeader
	}
	var f Format
	haveFmt := false
	off := int64(12)
	for off+8 <= size {
		if _, err := io.ReadFull(r, hdr[:8]); err != nil {
			return Format{}, 0, short(off, err)
		}
		id := [4]byte(hdr[0:4])
		n := int64(binary.LittleEndian.Uint32(hdr[4:]))
		body := off + 8
		isData := id == [4]byte{'d', 'a', 't', 'a'}
		if isData && n == 0xFFFFFFFF && !stream {
			n = size - body
		}
		switch {
		case isData && stream: // the caller bounds the samples
		case body+n > size && stream:
			return Format{}, 0, errorf(off, true, "chunk %q claims %d bytes: in a stream, the chunks before the data may hold %d bytes", id, n, MaxStreamHeader)
		case body+n > size:
			return Format{}, 0, errorf(off, false, "chunk %q claims %d bytes but only %d remain", id, n, size-body)
		}
		switch string(id[:]) {
		case "fmt ":
			var c [64]byte // parseFormat reads 40 bytes at most
			k := min(n, int64(len(c)))
			if _, err := io.ReadFull(r, c[:k]); err != nil {
				return Format{}, 0, short(body, err)
			}
			format, err := parseFormat(c[:k], body)
			if err != nil {
				return Format{}, 0, err
			}
			f, haveFmt = format, true
			if err := discard(r, n-k, body+k); err != nil {
				return Format{}, 0, err
			}
		case "data":
			switch {
			case !haveFmt:
				return Format{}, 0, errorf(off, true, "data chunk before the fmt chunk: a stream cannot go back to it")
			case stream && n == 0xFFFFFFFF:
				return f, -1, nil
			case n%int64(f.FrameBytes()) != 0:
				return Format{}, 0, errorf(body+n, false, "data size %d is not a whole number of %d-byte frames", n, f.FrameBytes())
			}
			return f, n, nil
		default:
			if err := discard(r, n, body); err != nil {
				return Format{}, 0, err
			}
		}
		off = body + n + n&1 // and the pad byte after an odd size
		if n&1 == 1 && off+8 <= size {
			if err := discard(r, 1, body+n); err != nil {
				return Format{}, 0, err
			}
		}
	}
	if !haveFmt {
		return Format{}, 0, errorf(off, false, "no fmt chunk")
	}
	return Format{}, 0, errorf(off, false, "no data chunk")
}

// discard skips n bytes of r, which start at offset off.
func discard(r io.Reader, n, off int64) error {
	if n <= 0 {
		return nil
	}
	if _, err := io.CopyN(io.Discard, r, n); err != nil {
		return short(off, err)
	}
	return nil
}

// short is the error for a file shorter than its size said, or a read
// error at offset off.
func short(off int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errorf(off, false, "the file ended early")
	}
	return err
}
