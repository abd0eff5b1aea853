package mailbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestStem(t *testing.T) {
	t.Parallel()
	testutil.Equal(t, "stem", Stem(1234, "ab-c"), "0000000001234-ab-c")
	tests := []struct {
		in string
		ok bool
	}{
		{"0000000001234-ab-c", true},
		{"1764465600000-3f0e9c9a-1b2c-4d5e-8f90-0123456789ab", true},
		{"000000000123-ab", false},   // 12 digits
		{"00000000012345ab", false},  // no dash
		{"0000000001234-", false},    // no id
		{"0000000001234-a/b", false}, // unsafe
		{"000000000123x-ab", false},
		{".tmp-0000000001234-ab", false},
	}
	for _, tt := range tests {
		ms, id, ok := ParseStem(tt.in)
		testutil.Equal(t, tt.in, ok, tt.ok)
		if ok {
			testutil.Equal(t, "round trip", Stem(ms, id), tt.in)
		}
	}
	testutil.Equal(t, "slot", SlotPath(7), "audio/slot_0007.wav")
	testutil.Equal(t, "slot", SlotName(2047), "slot_2047.wav")
}

func TestWriteListRemove(t *testing.T) {
	t.Parallel()
	dir := testutil.TempDir(t)
	testutil.Success(t, os.Mkdir(filepath.Join(dir, "box"), 0o755))
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	defer root.Close()
	testutil.Success(t, Write(root, "box", Stem(2, "b"), []byte(`{"n":2}`)))
	testutil.Success(t, Write(root, "box", Stem(1, "a"), []byte(`{"n":1}`)))
	// Unmarked JSON and temporaries are not listed.
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "box", Stem(0, "z")+".json"), nil, 0o644))
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "box", TempPrefix+Stem(0, "y")+".json"), nil, 0o644))
	// A marker without its JSON is not listed either.
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "box", Stem(0, "x")+".ready"), nil, 0o644))
	ready, names, err := List(root, "box")
	testutil.Success(t, err)
	testutil.Equal(t, "ready", ready, []Entry{{Stem(1, "a"), 1, "a"}, {Stem(2, "b"), 2, "b"}})
	testutil.Equal(t, "names", len(names), 7)
	b, err := ReadRegular(root, "box/"+Stem(1, "a")+".json", 100)
	testutil.Success(t, err)
	testutil.Equal(t, "content", string(b), `{"n":1}`)
	_, err = ReadRegular(root, "box/"+Stem(1, "a")+".json", 3)
	testutil.ErrorIs(t, err, ErrTooBig)
	// Writing the same stem twice fails and leaves the first intact.
	err = Write(root, "box", Stem(1, "a"), []byte(`{"n":9}`))
	testutil.Equal(t, "rewrite refused", err != nil, true)
	b, _ = ReadRegular(root, "box/"+Stem(1, "a")+".json", 100)
	testutil.Equal(t, "immutable", string(b), `{"n":1}`)
	testutil.Success(t, Remove(root, "box", Stem(1, "a")))
	testutil.Success(t, Remove(root, "box", Stem(1, "a"))) // missing is fine
	ready, _, _ = List(root, "box")
	testutil.Equal(t, "after remove", len(ready), 1)
	// A write into a folder that is not one fails with nothing left.
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	testutil.Equal(t, "write into a file fails", Write(root, "file", Stem(3, "c"), []byte("{}")) != nil, true)
}

func TestReadRegularRefusesLinks(t *testing.T) {
	t.Parallel()
	base := testutil.TempDir(t)
	dir := filepath.Join(base, "mb")
	testutil.Success(t, os.Mkdir(dir, 0o755))
	testutil.Success(t, os.WriteFile(filepath.Join(base, "secret"), []byte("x"), 0o644))
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "inside"), []byte("x"), 0o644))
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	defer root.Close()
	_, err = ReadRegular(root, "../secret", 10)
	testutil.Equal(t, "escape refused", err != nil, true)
	if !testutil.Symlink(t, filepath.Join(base, "secret"), filepath.Join(dir, "out")) ||
		!testutil.Symlink(t, "inside", filepath.Join(dir, "in")) {
		return
	}
	for _, name := range []string{"out", "in"} {
		_, err := ReadRegular(root, name, 10)
		testutil.ErrorIs(t, err, ErrNotRegular)
	}
	// ReplaceFile replaces a link instead of writing through it.
	testutil.Success(t, ReplaceFile(root, "out", []byte("new")))
	b, _ := os.ReadFile(filepath.Join(base, "secret"))
	testutil.Equal(t, "outside untouched", string(b), "x")
	fi, err := os.Lstat(filepath.Join(dir, "out"))
	testutil.Success(t, err)
	testutil.Equal(t, "now a file", fi.Mode().IsRegular(), true)
	_, err = root.Lstat("missing")
	testutil.ErrorIs(t, err, fs.ErrNotExist)
}

func TestWAV(t *testing.T) {
	t.Parallel()
	pcm := []byte{1, 0, 0xff, 0x7f, 0, 0x80}
	w, err := DecodeWAV(EncodeWAV(pcm, 44100, 1))
	testutil.Success(t, err)
	testutil.Equal(t, "round trip", w, WAV{Rate: 44100, Channels: 1, PCM: pcm})
	s := Silent(44100)
	testutil.Equal(t, "placeholder size", len(s), 46)
	// Extra chunks are skipped (with padding for odd sizes).
	withList := append([]byte{}, s[:36]...)
	withList = append(withList, "LIST"...)
	withList = binary.LittleEndian.AppendUint32(withList, 3)
	withList = append(withList, 'a', 'b', 'c', 0)
	withList = append(withList, s[36:]...)
	w, err = DecodeWAV(withList)
	testutil.Success(t, err)
	testutil.Equal(t, "skipped LIST", w.PCM, []byte{0, 0})
	bad := map[string][]byte{
		"empty":     nil,
		"not riff":  bytes.Repeat([]byte{'x'}, 44),
		"float":     patch(s, 20, 3),
		"8 bit":     patch(s, 34, 8),
		"overrun":   patch32(s, 40, 1000),
		"odd data":  append(patch32(s, 40, 1), 0),
		"truncated": s[:40],
	}
	for name, b := range bad {
		_, err := DecodeWAV(b)
		if !errors.Is(err, ErrWAV) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func patch(b []byte, off int, v uint16) []byte {
	c := append([]byte{}, b...)
	binary.LittleEndian.PutUint16(c[off:], v)
	return c
}

func patch32(b []byte, off int, v uint32) []byte {
	c := append([]byte{}, b...)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

// FuzzDecodeWAV also holds the streaming ReadWAV equal to DecodeWAV.
func FuzzDecodeWAV(f *testing.F) {
	f.Add(Silent(44100))
	f.Add(EncodeWAV([]byte{1, 2, 3, 4}, 16000, 2))
	s := Silent(44100)
	for _, b := range [][]byte{patch32(s, 40, 1000), s[:40], append(patch32(s, 40, 1), 0), patch(s, 20, 3)} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := DecodeWAV(b)
		if err == nil && (len(w.PCM)%2 != 0 || len(w.PCM) > len(b)) {
			t.Fatalf("bad result %+v", w)
		}
		r, rerr := ReadWAV(bytes.NewReader(b), int64(len(b)))
		if (err == nil) != (rerr == nil) {
			t.Fatalf("DecodeWAV: %v, ReadWAV: %v", err, rerr)
		}
		if err != nil {
			if !errors.Is(rerr, ErrWAV) {
				t.Fatalf("ReadWAV error %v is not ErrWAV", rerr)
			}
			return
		}
		if r.Rate != w.Rate || r.Channels != w.Channels || r.DataBytes != int64(len(w.PCM)) || len(r.Samples) != len(w.PCM)/2 {
			t.Fatalf("ReadWAV %d Hz %d ch %d bytes, DecodeWAV %d Hz %d ch %d bytes", r.Rate, r.Channels, r.DataBytes, w.Rate, w.Channels, len(w.PCM))
		}
		for i, v := range r.Samples {
			if v != int16(binary.LittleEndian.Uint16(w.PCM[2*i:])) {
				t.Fatalf("sample %d differs", i)
			}
		}
	})
}

// TestReadWAV_streams: reading a slot costs its samples, not the file
// on top (issue #16: a 64 MiB slot cost about 128 MiB per segment). Not
// parallel: it reads the process's allocation total.
func TestReadWAV_streams(t *testing.T) {
	pcm := make([]byte, 8<<20)
	for i := range pcm {
		pcm[i] = byte(i * 7)
	}
	name := filepath.Join(testutil.TempDir(t), "slot.wav")
	testutil.Success(t, os.WriteFile(name, EncodeWAV(pcm, 44100, 1), 0o600))
	pcm = nil
	f, err := os.Open(name)
	testutil.Success(t, err)
	defer f.Close()
	fi, err := f.Stat()
	testutil.Success(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := ReadWAV(f, fi.Size())
	runtime.ReadMemStats(&after)
	testutil.Success(t, err)
	testutil.Equal(t, "samples", len(w.Samples), 4<<20)
	i := 12345
	testutil.Equal(t, "a sample", w.Samples[i], int16(uint16(byte(2*i*7))|uint16(byte((2*i+1)*7))<<8))
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(8<<20+256<<10); got > limit {
		t.Errorf("reading an 8 MiB slot allocated %d bytes, want at most the samples and a buffer (%d)", got, limit)
	}
	// A file shorter than its size said (it shrank while read) is an error.
	_, err = f.Seek(0, 0)
	testutil.Success(t, err)
	_, err = ReadWAV(io.LimitReader(f, fi.Size()-2), fi.Size())
	testutil.ErrorIs(t, err, ErrWAV)
}

// BenchmarkReadSlot reads a 10 s slot as the game does (ReadWAV, streamed)
// against the way it did before issue #16 (ReadRegular, DecodeWAV, then a
// copy into samples), for B/op.
func BenchmarkReadSlot(b *testing.B) {
	dir := testutil.TempDir(b)
	root, err := os.OpenRoot(dir)
	testutil.Success(b, err)
	defer root.Close()
	testutil.Success(b, os.WriteFile(filepath.Join(dir, "slot.wav"), EncodeWAV(make([]byte, 2*441000), 44100, 1), 0o600))
	b.Run("streamed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f, fi, err := OpenRegular(root, "slot.wav", MaxSlotBytes)
			testutil.Success(b, err)
			_, err = ReadWAV(f, fi.Size())
			f.Close()
			testutil.Success(b, err)
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := ReadRegular(root, "slot.wav", MaxSlotBytes)
			testutil.Success(b, err)
			w, err := DecodeWAV(data)
			testutil.Success(b, err)
			s := make([]int16, len(w.PCM)/2)
			for i := range s {
				s[i] = int16(binary.LittleEndian.Uint16(w.PCM[2*i:]))
			}
		}
	})
}
