package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestAppendDecode(t *testing.T) {
	t.Parallel()
	f32 := func(vs ...float32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	cases := []struct {
		name    string
		enc     Encoding
		in      []byte
		want    []float32
		wantErr bool
	}{
		{"s16", EncodingS16LE, []byte{0x00, 0x80, 0xff, 0x7f, 0x00, 0x40, 0xff, 0xff}, []float32{-1, 32767.0 / 32768, 0.5, -1.0 / 32768}, false},
		{"s16 odd bytes", EncodingS16LE, []byte{1, 2, 3}, nil, true},
		{"f32", EncodingF32LE, f32(0.25, -1, 1), []float32{0.25, -1, 1}, false},
		{"f32 partial", EncodingF32LE, []byte{0, 0, 0}, nil, true},
		{"f32 NaN", EncodingF32LE, f32(0, float32(math.NaN())), nil, true},
		{"f32 Inf", EncodingF32LE, f32(float32(math.Inf(1))), nil, true},
		{"bad encoding", Encoding(9), []byte{0, 0}, nil, true},
		{"empty", EncodingS16LE, nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prefix := []float32{42}
			got, err := AppendDecode(prefix, c.enc, c.in)
			if c.wantErr {
				var fe *FormatError
				testutil.ErrorAs(t, err, &fe)
				testutil.Equal(t, "dst unchanged", got, prefix)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "samples", got[1:], append([]float32{}, c.want...))
		})
	}
}

func TestAppendEncode_roundTrip(t *testing.T) {
	t.Parallel()
	all := make([]int16, 0, 65536)
	for v := math.MinInt16; v <= math.MaxInt16; v++ {
		all = append(all, int16(v))
	}
	f := AppendFloat32(nil, all)
	b := AppendEncode(nil, EncodingS16LE, f)
	back, err := AppendDecode(nil, EncodingS16LE, b)
	testutil.Success(t, err)
	testutil.Equal(t, "s16 round trip", AppendInt16(nil, back), all)
	fb := AppendEncode(nil, EncodingF32LE, f)
	f2, err := AppendDecode(nil, EncodingF32LE, fb)
	testutil.Success(t, err)
	testutil.Equal(t, "f32 round trip", f2, f)
}

func TestAppendInt16_clipAndRound(t *testing.T) {
	t.Parallel()
	in := []float32{2, -2, 1, -1, 0.5 / 32768, -0.5 / 32768, 1.4 / 32768, float32(math.NaN()), float32(math.Inf(-1))}
	testutil.Equal(t, "int16", AppendInt16(nil, in), []int16{32767, -32768, 32767, -32768, 1, -1, 1, 0, -32768})
}

func TestAppendDownmix(t *testing.T) {
	t.Parallel()
	got, err := AppendDownmix(nil, []float32{1, 0, 0.5, 0.5, -1, 1}, 2)
	testutil.Success(t, err)
	testutil.Equal(t, "stereo", got, []float32{0.5, 0.5, 0})
	got, err = AppendDownmix(nil, []float32{0.3, 0.3, 0.3, 0.6, 0, 0}, 3)
	testutil.Success(t, err)
	if math.Abs(float64(got[0]-0.3)) > 1e-6 || math.Abs(float64(got[1]-0.2)) > 1e-6 {
		t.Errorf("3ch: %v", got)
	}
	got, err = AppendDownmix(nil, []float32{0.1, 0.2}, 1)
	testutil.Success(t, err)
	testutil.Equal(t, "mono", got, []float32{0.1, 0.2})
	_, err = AppendDownmix(nil, []float32{1, 2, 3}, 2)
	testutil.Error(t, err)
	_, err = AppendDownmix(nil, []float32{1}, 0)
	testutil.Error(t, err)
}

func TestParseEncoding(t *testing.T) {
	t.Parallel()
	for _, e := range []Encoding{EncodingS16LE, EncodingF32LE} {
		got, err := ParseEncoding(e.String())
		testutil.Success(t, err)
		testutil.Equal(t, e.String(), got, e)
	}
	_, err := ParseEncoding("pcm_u8")
	testutil.Error(t, err)
}

func TestFormat_allocs(t *testing.T) {
	testutil.SkipAllocs(t)
	f := sine(16000, 440, 0.5, 1600)
	b := make([]byte, 0, 4*len(f))
	d := make([]float32, 0, len(f))
	i := make([]int16, 0, len(f))
	wav := AppendWAVMust(t, f)
	var w WAV
	testutil.Success(t, DecodeWAV(&w, wav))
	allocs := testing.AllocsPerRun(20, func() {
		b = AppendEncode(b[:0], EncodingS16LE, f)
		d, _ = AppendDecode(d[:0], EncodingS16LE, b)
		b = AppendEncode(b[:0], EncodingF32LE, f)
		d, _ = AppendDecode(d[:0], EncodingF32LE, b)
		i = AppendInt16(i[:0], f)
		d = AppendFloat32(d[:0], i)
		d, _ = AppendDownmix(d[:0], f, 2)
		_ = DecodeWAV(&w, wav)
	})
	testutil.Equal(t, "allocs", allocs, 0.0)
}

func AppendWAVMust(tb testing.TB, f []float32) []byte {
	tb.Helper()
	b, err := AppendWAV(nil, 16000, 1, f)
	testutil.Success(tb, err)
	return b
}

// wavFile builds a RIFF/WAVE file from chunks, padding odd-sized ones.
func wavFile(chunks ...[]byte) []byte {
	var body []byte
	body = append(body, "WAVE"...)
	for _, c := range chunks {
		body = append(body, c...)
		if len(c)%2 == 1 {
			body = append(body, 0)
		}
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

func chunk(id string, data []byte) []byte {
	c := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	return append(c, data...)
}

func fmtChunk(tag, channels, rate, bits int, size int, extTag int) []byte {
	le := binary.LittleEndian
	var b []byte
	b = le.AppendUint16(b, uint16(tag))
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	switch size {
	case 18:
		b = le.AppendUint16(b, 0)
	case 40:
		b = le.AppendUint16(b, 22)
		b = le.AppendUint16(b, uint16(bits)) // valid bits
		b = le.AppendUint32(b, 3)            // channel mask
		b = le.AppendUint16(b, uint16(extTag))
		b = append(b, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71) // KSDATAFORMAT_SUBTYPE GUID after the tag
	}
	return chunk("fmt ", b)
}

func TestDecodeWAV(t *testing.T) {
	t.Parallel()
	le := binary.LittleEndian
	s16 := []byte{0x00, 0x40, 0x00, 0xc0} // 0.5, -0.5
	s24 := []byte{0x00, 0x00, 0x40, 0x00, 0x00, 0xc0}
	s32 := le.AppendUint32(le.AppendUint32(nil, 1<<30), uint32(0xC0000000))
	f32 := le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.5)), math.Float32bits(-0.5))
	f64 := le.AppendUint64(le.AppendUint64(nil, math.Float64bits(0.5)), math.Float64bits(-0.5))
	u8 := []byte{192, 64}
	half := []float32{0.5, -0.5}
	list := chunk("LIST", []byte("INFOISFT\x05\x00\x00\x00Lavf\x00"))
	cases := []struct {
		name     string
		file     []byte
		channels int
		want     []float32
		errAt    int64 // -1: no error
		unsupp   bool
	}{
		{"pcm16 fmt16", wavFile(fmtChunk(1, 1, 16000, 16, 16, 0), chunk("data", s16)), 1, half, -1, false},
		{"pcm16 fmt18 with fact and LIST", wavFile(fmtChunk(1, 2, 44100, 16, 18, 0), chunk("fact", []byte{1, 0, 0, 0}), list, chunk("data", s16)), 2, half, -1, false},
		{"pcm24", wavFile(fmtChunk(1, 1, 48000, 24, 16, 0), chunk("data", s24)), 1, half, -1, false},
		{"pcm32 extensible", wavFile(fmtChunk(0xFFFE, 2, 48000, 32, 40, 1), chunk("data", s32)), 2, half, -1, false},
		{"float32", wavFile(fmtChunk(3, 1, 48000, 32, 18, 0), chunk("fact", []byte{2, 0, 0, 0}), chunk("data", f32)), 1, half, -1, false},
		{"float32 extensible", wavFile(fmtChunk(0xFFFE, 1, 48000, 32, 40, 3), chunk("data", f32)), 1, half, -1, false},
		{"float64", wavFile(fmtChunk(3, 1, 48000, 64, 16, 0), chunk("data", f64)), 1, half, -1, false},
		{"pcm8", wavFile(fmtChunk(1, 1, 8000, 8, 16, 0), chunk("data", u8)), 1, half, -1, false},
		{"odd chunk padded", wavFile(fmtChunk(1, 1, 16000, 16, 16, 0), chunk("junk", []byte{1, 2, 3}), chunk("data", s16)), 1, half, -1, false},
		{"LIST after data", wavFile(fmtChunk(1, 1, 16000, 16, 16, 0), chunk("data", s16), list), 1, half, -1, false},
		{"streamed data size", append(wavFile(fmtChunk(1, 1, 16000, 16, 16, 0)), append([]byte("data\xff\xff\xff\xff"), s16...)...), 1, half, -1, false},
		{"not RIFF", []byte("RIFX\x00\x00\x00\x00WAVE"), 0, nil, 0, true},
		{"garbage", []byte("hello"), 0, nil, 0, false},
		{"no fmt", wavFile(chunk("data", s16)), 0, nil, 24, false},
		{"no data", wavFile(fmtChunk(1, 1, 16000, 16, 16, 0)), 0, nil, 36, false},
		{"truncated data", wavFile(fmtChunk(1, 1, 16000, 16, 16, 0), chunk("data", s16))[:42], 0, nil, 36, false},
		{"partial frame", wavFile(fmtChunk(1, 2, 16000, 16, 16, 0), chunk("data", s16[:2])), 0, nil, 46, false},
		{"short fmt", wavFile(chunk("fmt ", make([]byte, 14)), chunk("data", s16)), 0, nil, 20, false},
		{"a-law", wavFile(fmtChunk(6, 1, 8000, 8, 16, 0), chunk("data", u8)), 0, nil, 20, true},
		{"pcm12", wavFile(fmtChunk(1, 1, 8000, 12, 16, 0), chunk("data", u8)), 0, nil, 34, true},
		{"zero channels", wavFile(fmtChunk(1, 0, 8000, 16, 16, 0), chunk("data", s16)), 0, nil, 22, false},
		{"bad block align", wavFile(corrupt(fmtChunk(1, 1, 8000, 16, 16, 0), 20), chunk("data", s16)), 0, nil, 32, false},
		{"extensible mp3 guid", wavFile(corrupt(fmtChunk(0xFFFE, 1, 48000, 16, 40, 1), 34), chunk("data", s16)), 0, nil, 44, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var w WAV
			err := DecodeWAV(&w, c.file)
			if c.errAt >= 0 {
				var fe *FormatError
				testutil.ErrorAs(t, err, &fe)
				t.Logf("error: %v", err)
				testutil.Equal(t, "offset", fe.Offset, c.errAt)
				testutil.Equal(t, "unsupported", fe.Unsupported, c.unsupp)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "channels", w.Channels, c.channels)
			testutil.Equal(t, "samples", w.Samples, c.want)
		})
	}
}

func corrupt(b []byte, at int) []byte {
	b[at] ^= 0xff
	return b
}

func TestAppendWAV_roundTrip(t *testing.T) {
	t.Parallel()
	x := sine(44100, 440, 0.7, 882)
	var buf bytes.Buffer
	testutil.Success(t, WriteWAV(&buf, 44100, 2, x))
	testutil.Equal(t, "size", buf.Len(), 44+2*len(x))
	w, err := ReadWAV(&buf, 0)
	testutil.Success(t, err)
	testutil.Equal(t, "rate", w.SampleRate, 44100)
	testutil.Equal(t, "channels", w.Channels, 2)
	testutil.Equal(t, "frames", w.Frames(), 441)
	for i := range x {
		if math.Abs(float64(w.Samples[i]-x[i])) > 1.0/32768 {
			t.Fatalf("sample %d: %v, want %v", i, w.Samples[i], x[i])
		}
	}
	_, err = AppendWAV(nil, 0, 1, x)
	testutil.Error(t, err)
	_, err = AppendWAV(nil, 16000, 2, x[:3])
	testutil.Error(t, err)
	_, err = ReadWAV(bytes.NewReader([]byte("RIFF")), 0)
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("ReadWAV of a stub: %v", err)
	}
}

// FuzzDecodeWAV checks that no input crashes the decoder and that accepted
// files have consistent shape.
func FuzzDecodeWAV(f *testing.F) {
	f.Add(wavFile(fmtChunk(1, 1, 16000, 16, 16, 0), chunk("data", []byte{1, 2, 3, 4})))
	f.Add(wavFile(fmtChunk(0xFFFE, 2, 48000, 24, 40, 1), chunk("data", make([]byte, 12))))
	f.Add(wavFile(fmtChunk(3, 1, 48000, 32, 18, 0), chunk("fact", []byte{1, 0, 0, 0}), chunk("data", make([]byte, 8))))
	f.Fuzz(func(t *testing.T, b []byte) {
		var w WAV
		if err := DecodeWAV(&w, b); err != nil {
			return
		}
		if w.Channels < 1 || len(w.Samples)%w.Channels != 0 || w.SampleRate < 1 {
			t.Fatalf("inconsistent result %+v", w)
		}
	})
}

// TestAppendFloat32_kernelsAgree checks the AVX2 conversion (when the CPU
// has it) bit for bit against the pure-Go one, on every int16 and on
// lengths that leave every tail. Issue #24.
func TestAppendFloat32_kernelsAgree(t *testing.T) {
	t.Parallel()
	all := make([]int16, 65536)
	for i := range all {
		all[i] = int16(i - 32768)
	}
	want := make([]float32, len(all))
	float32Generic(want, all)
	lengths := []int{65535, 65536}
	for n := range 257 { // every length up to 256 (issue #30), and all of them
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		got := AppendFloat32([]float32{42}, all[:n])
		testutil.Equal(t, "length", len(got), n+1)
		for i := range n {
			if math.Float32bits(got[i+1]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: sample %d (%d) is %v, want %v", n, i, all[i], got[i+1], want[i])
			}
		}
	}
	if want[0] != -1 || want[32768] != 0 || want[65535] != 32767.0/32768 {
		t.Fatalf("reference: %v %v %v", want[0], want[32768], want[65535])
	}
}
