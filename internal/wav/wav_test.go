package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestAppendHeader_layout checks the header byte by byte against the
// canonical layout (the one the file mailbox and the demo wrote by hand).
func TestAppendHeader_layout(t *testing.T) {
	t.Parallel()
	h, err := AppendHeader([]byte("x"), Format{SampleRate: 44100, Channels: 2, BitsPerSample: 16}, 8)
	testutil.Success(t, err)
	le := binary.LittleEndian
	want := []byte("x")
	want = append(want, "RIFF"...)
	want = le.AppendUint32(want, 36+8)
	want = append(want, "WAVEfmt "...)
	want = le.AppendUint32(want, 16)
	want = le.AppendUint16(want, 1)
	want = le.AppendUint16(want, 2)
	want = le.AppendUint32(want, 44100)
	want = le.AppendUint32(want, 44100*4)
	want = le.AppendUint16(want, 4)
	want = le.AppendUint16(want, 16)
	want = append(want, "data"...)
	want = le.AppendUint32(want, 8)
	testutil.Equal(t, "header", h, want)
	testutil.Equal(t, "size", len(h)-1, HeaderSize)
}

// TestParse_roundTrip writes a header for each integer width and parses
// the file back: the format survives and the data is the bytes written,
// not a copy.
func TestParse_roundTrip(t *testing.T) {
	t.Parallel()
	for _, bits := range []int{8, 16, 24, 32} {
		f := Format{SampleRate: 16000, Channels: 1, BitsPerSample: bits}
		data := make([]byte, 3*f.FrameBytes())
		for i := range data {
			data[i] = byte(i + 1)
		}
		file, err := AppendHeader(nil, f, int64(len(data)))
		testutil.Success(t, err)
		file = append(file, data...)
		got, err := Parse(file)
		testutil.Success(t, err)
		testutil.Equal(t, "format", got.Format, f)
		testutil.Equal(t, "data", got.Data, data)
		testutil.Equal(t, "offset", got.DataOffset, int64(HeaderSize))
		if &got.Data[0] != &file[HeaderSize] {
			t.Errorf("%d bits: Data is a copy, want it to alias the input", bits)
		}
	}
}

func TestFile_AppendFloat32(t *testing.T) {
	t.Parallel()
	le := binary.LittleEndian
	cases := []struct {
		name string
		f    Format
		data []byte
		want []float32
	}{
		{"u8", Format{BitsPerSample: 8}, []byte{192, 64, 128}, []float32{0.5, -0.5, 0}},
		{"s16", Format{BitsPerSample: 16}, []byte{0x00, 0x40, 0x00, 0xc0, 0xff, 0x7f}, []float32{0.5, -0.5, 32767.0 / 32768}},
		{"s24", Format{BitsPerSample: 24}, []byte{0x00, 0x00, 0x40, 0x00, 0x00, 0xc0}, []float32{0.5, -0.5}},
		{"s32", Format{BitsPerSample: 32}, le.AppendUint32(le.AppendUint32(nil, 1<<30), 0xC0000000), []float32{0.5, -0.5}},
		{"f32 with NaN and Inf", Format{BitsPerSample: 32, Float: true},
			le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.25)), math.Float32bits(float32(math.NaN()))), math.Float32bits(float32(math.Inf(-1)))),
			[]float32{0.25, 0, -1}},
		{"f64", Format{BitsPerSample: 64, Float: true}, le.AppendUint64(nil, math.Float64bits(-0.75)), []float32{-0.75}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := File{Format: c.f, Data: c.data}
			testutil.Equal(t, "samples", f.AppendFloat32([]float32{9})[1:], c.want)
		})
	}
}

func TestAppendHeader_invalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		f     Format
		bytes int64
	}{
		{"float", Format{SampleRate: 16000, Channels: 1, BitsPerSample: 32, Float: true}, 4},
		{"12 bit", Format{SampleRate: 16000, Channels: 1, BitsPerSample: 12}, 4},
		{"no channels", Format{SampleRate: 16000, BitsPerSample: 16}, 4},
		{"zero rate", Format{Channels: 1, BitsPerSample: 16}, 4},
		{"partial frame", Format{SampleRate: 16000, Channels: 2, BitsPerSample: 16}, 6},
		{"negative size", Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, -2},
		{"over 4 GiB", Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, math.MaxUint32},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := AppendHeader([]byte("keep"), c.f, c.bytes)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want a *wav.Error", err)
			}
			testutil.Equal(t, "dst unchanged", string(out), "keep")
		})
	}
}

// readHeaderCases seed the differential fuzz target: canonical files,
// extra chunks with odd sizes, streamed data sizes and broken files.
func readHeaderCases() [][]byte {
	f := Format{SampleRate: 44100, Channels: 1, BitsPerSample: 16}
	canon, _ := AppendHeader(nil, f, 4)
	canon = append(canon, 1, 2, 3, 4)
	withList := append([]byte{}, canon[:36]...)
	withList = append(withList, "LIST\x03\x00\x00\x00abc\x00"...)
	withList = append(withList, canon[36:]...)
	streamed := append([]byte{}, canon...)
	binary.LittleEndian.PutUint32(streamed[40:], 0xFFFFFFFF)
	dataFirst := append(append([]byte{}, canon[:12]...), canon[36:]...)
	dataFirst = append(dataFirst, canon[12:36]...)
	return [][]byte{canon, withList, streamed, dataFirst, canon[:40], canon[:12], []byte("RIFX\x00\x00\x00\x00WAVE")}
}

// Issue #17: ReadHeader, which the mailbox reads its slots with, is Parse
// on a stream: the same result and the same errors on every input, but
// for a data chunk before the fmt chunk, which only Parse can read.
func TestReadHeader_likeParse(t *testing.T) {
	t.Parallel()
	for _, b := range readHeaderCases() {
		checkReadHeader(t, b)
	}
}

func FuzzReadHeader(f *testing.F) {
	for _, b := range readHeaderCases() {
		f.Add(b)
	}
	f.Fuzz(checkReadHeader)
}

func checkReadHeader(t *testing.T, b []byte) {
	file, perr := Parse(b)
	r := bytes.NewReader(b)
	format, n, rerr := ReadHeader(r, int64(len(b)))
	var we *Error
	switch {
	case rerr != nil && !errors.As(rerr, &we):
		t.Fatalf("ReadHeader error %v is not an *Error", rerr)
	case perr != nil && rerr == nil:
		t.Fatalf("Parse: %v, ReadHeader accepted %+v", perr, format)
	case perr == nil && rerr != nil:
		if !strings.Contains(rerr.Error(), "before the fmt chunk") || file.DataOffset > int64(bytes.Index(b, []byte("fmt "))) {
			t.Fatalf("Parse accepted the file, ReadHeader: %v", rerr)
		}
	case perr == nil:
		pos := int64(len(b)) - int64(r.Len())
		if format != file.Format || n != int64(len(file.Data)) || pos != file.DataOffset {
			t.Fatalf("ReadHeader %+v, %d bytes at %d; Parse %+v, %d bytes at %d", format, n, pos, file.Format, len(file.Data), file.DataOffset)
		}
	}
}

// Issue #31: of a stream of unknown size (size -1), ReadHeader returns what
// it returns with the size known, but -1 for a streamed data chunk, and
// refuses a chunk before the data of more than MaxStreamHeader bytes from
// its header.
func TestReadHeader_stream(t *testing.T) {
	t.Parallel()
	cases := readHeaderCases()
	for i, b := range cases[:3] { // canonical, a LIST chunk, streamed
		f, n, err := ReadHeader(bytes.NewReader(b), -1)
		testutil.Success(t, err)
		want := int64(4)
		if i == 2 {
			want = -1
		}
		testutil.Equal(t, "format", f, Format{SampleRate: 44100, Channels: 1, BitsPerSample: 16})
		testutil.Equal(t, "data size", n, want)
	}
	big := append([]byte{}, cases[0][:12]...)
	big = binary.LittleEndian.AppendUint32(append(big, "LIST"...), MaxStreamHeader)
	r := bytes.NewReader(append(big, make([]byte, 64)...))
	_, _, err := ReadHeader(r, -1)
	var e *Error
	if !errors.As(err, &e) || r.Len() != 64 {
		t.Fatalf("ReadHeader: %v with %d bytes left, want an *Error and the chunk unread", err, r.Len())
	}
}
