package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestSimFaults_Set(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want simFaults
		err  bool
	}{
		{name: "all", in: "error=unsupported_voice,delay=20ms,disconnect-after=3,cancel-lost,gone",
			want: simFaults{errorCode: "unsupported_voice", delay: 20 * time.Millisecond, disconnectAfter: 3, cancelReason: "connection_lost", gone: true}},
		{name: "spaces and empty items", in: " cancel=service_stopped , ,", want: simFaults{cancelReason: "service_stopped"}},
		{name: "empty cancel reason", in: "cancel=", err: true},
		{name: "unknown", in: "explode", err: true},
		{name: "empty error code", in: "error=", err: true},
		{name: "bad delay", in: "delay=soon", err: true},
		{name: "zero disconnect", in: "disconnect-after=0", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var f simFaults
			err := f.Set(tc.in)
			if tc.err {
				testutil.Error(t, err)
				return
			}
			testutil.Success(t, err)
			f.raw = ""
			testutil.Equal(t, "faults", f, tc.want)
		})
	}
}

func Test_characterID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, want string }{
		{"Wren", "wren"},
		{"Captain Mira Vance", "captain-mira-vance"},
		{"  Dr. Who?! ", "dr-who"},
		{"R2-D2", "r2-d2"},
		{"???", "character"},
		// Issue #18: letters outside ASCII add a short hash of the name
		// (the first 4 bytes of its SHA-256), so CJK-only names differ.
		{"東京", "character-" + hash8("東京")},
		{"大阪", "character-" + hash8("大阪")},
		{"Zoë", "zo-" + hash8("Zoë")},
	} {
		testutil.Equal(t, tc.name, characterID(tc.name), tc.want)
	}
	if characterID("東京") == characterID("大阪") || characterID("電影") != characterID(" 電影 ") {
		t.Fatal("ids of CJK names are not distinct and stable")
	}
}

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// wavOut keeps exactly what was written, and Rewind drops only the audio
// of the attempt being sent again.
func TestWavOut_Rewind(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "out.wav")
	w, err := createWAV(file)
	testutil.Success(t, err)
	testutil.Success(t, w.Write([]int16{1, -2, 32767}, 44100))
	mark := w.Mark()
	testutil.Success(t, w.Write([]int16{9, 9, 9, 9}, 44100))
	testutil.Success(t, w.Rewind(mark))
	testutil.Success(t, w.Write([]int16{-32768, 4}, 44100))
	testutil.Error(t, w.Write([]int16{1}, 22050)) // rates never mix
	w.err = nil
	testutil.Success(t, w.Close())
	data, err := os.ReadFile(file)
	testutil.Success(t, err)
	want := []byte{1, 0, 0xfe, 0xff, 0xff, 0x7f, 0, 0x80, 4, 0}
	testutil.Equal(t, "samples", data[wavHeaderBytes:], want)
	testutil.Equal(t, "header", string(data[:4])+string(data[8:16])+string(data[36:40]), "RIFFWAVEfmt data")
	testutil.Equal(t, "data size", int(data[40]), len(want))
}

// The status line is drawn only on a terminal, and erased before reply
// text or progress is printed.
func TestConsole_Status(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	c := &console{out: &out, err: &errOut}
	c.Status("connected")
	c.Meter("mic [##...]")
	c.Text("Hi")
	c.EndText()
	testutil.Equal(t, "pipe stdout", out.String(), "Hi\n")

	out.Reset()
	c = &console{out: &out, err: &errOut, tty: true}
	c.Status("connected · queue 0/20")
	c.Text("Hello")
	c.Printf("note")
	got := out.String()
	if !strings.HasPrefix(got, "\x1b[2m[connected · queue 0/20]\x1b[0m you> \r\x1b[2KHello\n") {
		t.Errorf("terminal stdout %q", got)
	}
	testutil.Equal(t, "stderr", errOut.String(), "note\n")

	// A level meter replaces the status line and is erased in turn.
	out.Reset()
	c.Meter("mic  1.0s [##...]")
	c.Meter("mic  1.1s [###..]")
	c.Text("x")
	testutil.Equal(t, "meter", out.String(), "mic  1.0s [##...]\r\x1b[2Kmic  1.1s [###..]\r\x1b[2Kx")
}

func Test_resampleTo16k(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{8000, 16000, 22050, 44100, 48000, 96000} {
		in := make([]float32, rate/2) // half a second
		out, err := resampleTo16k(in, rate)
		testutil.Success(t, err)
		testutil.Equal(t, "frames from "+strconv.Itoa(rate)+" Hz", len(out), 8000)
	}
}

// Issue #18: the keys terminals send, in their CSI, SS3, vt and rxvt
// forms, are known; other sequences and control characters are dropped
// whole, never typed; a key split across reads waits for its rest.
// Issue #32: in a paste only the paste's end and line ends are keys.
func Test_parseKey(t *testing.T) {
	t.Parallel()
	type parsed struct {
		k editKey
		r rune
		n int
	}
	for _, tc := range []struct {
		name, in     string
		paste, final bool
		want         parsed
	}{
		{name: "letter", in: "ab", want: parsed{keyRune, 'a', 1}},
		{name: "wide", in: "日本", want: parsed{keyRune, '日', 3}},
		{name: "tab is a space", in: "\tx", want: parsed{keyRune, ' ', 1}},
		{name: "CSI arrow", in: "\x1b[Dx", want: parsed{keyLeft, 0, 3}},
		{name: "SS3 arrow", in: "\x1bOA", want: parsed{keyUp, 0, 3}},
		{name: "vt Home", in: "\x1b[1~", want: parsed{keyHome, 0, 4}},
		{name: "rxvt End", in: "\x1b[8~", want: parsed{keyEnd, 0, 4}},
		{name: "Alt-Left", in: "\x1b[1;3D", want: parsed{keyWordLeft, 0, 6}},
		{name: "F1 dropped", in: "\x1bOPok", want: parsed{keyNone, 0, 3}},
		{name: "F5 dropped", in: "\x1b[15~", want: parsed{keyNone, 0, 5}},
		{name: "Ctrl-C", in: "\x03", want: parsed{keyInterrupt, 0, 1}},
		{name: "bell dropped", in: "\x07", want: parsed{keyNone, 0, 1}},
		{name: "C1 dropped", in: "\u0085", want: parsed{keyNone, 0, 2}},
		{name: "invalid UTF-8 dropped", in: "\xffa", want: parsed{keyNone, 0, 1}},
		{name: "split after ESC", in: "\x1b", want: parsed{keyNone, 0, 0}},
		{name: "split inside CSI", in: "\x1b[4", want: parsed{keyNone, 0, 0}},
		{name: "split inside UTF-8", in: "\xe6\x97", want: parsed{keyNone, 0, 0}},
		{name: "lone ESC at the end of input", in: "\x1b", final: true, want: parsed{keyNone, 0, 1}},
		{name: "paste: Ctrl-C typed", in: "\x03", paste: true, want: parsed{keyNone, 0, 1}},
		{name: "paste: arrow dropped", in: "\x1b[D", paste: true, want: parsed{keyNone, 0, 3}},
		{name: "paste: Enter", in: "\r", paste: true, want: parsed{keyEnter, 0, 1}},
		{name: "paste: end", in: "\x1b[201~", paste: true, want: parsed{keyPasteEnd, 0, 6}},
	} {
		k, r, n := parseKey([]byte(tc.in), tc.paste, tc.final)
		testutil.Equal(t, tc.name, parsed{k, r, n}, tc.want)
	}
}

// Issue #18: control characters and key escape sequences never reach the
// engine, whether typed, pasted or piped.
func Test_cleanLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out string
		removed int
	}{
		{"Hello", "Hello", 0},
		{"left\x1b[Dright", "leftright", 3},
		{"up\x1b[A", "up", 3},
		{"f1\x1bOP", "f1", 3},
		{"f5\x1b[15~", "f5", 5},
		{"tab\there", "tab here", 0},
		{"bell\x07 nul\x00 del\x7f c1\u0085", "bell nul del c1", 4},
		{"東京 café 😀", "東京 café 😀", 0},
		{"trailing ESC\x1b", "trailing ESC", 1},
	} {
		out, n := cleanLine(tc.in)
		testutil.Equal(t, tc.in+": line", out, tc.out)
		testutil.Equal(t, tc.in+": removed", n, tc.removed)
	}
}

// A line typed or pasted on the terminal is bounded; key sequences pass,
// so a paste's end marker is never lost.
func Test_limitLine(t *testing.T) {
	t.Parallel()
	n := maxLineBytes - 2
	out, dropped := limitLine([]byte("abcd\x1b[201~e\rxy"), &n)
	testutil.Equal(t, "kept", string(out), "ab\x1b[201~\rxy")
	testutil.Equal(t, "dropped", dropped, 3)
	testutil.Equal(t, "count after the line end", n, 2)
}

// The server writes its Recorder from a goroutine of its own, so a Reply
// can return before the line of its request reaches the tap: the transfer
// is then said when the line comes (CI once missed the line: the demo had
// read the tap right after Reply returned, before the line was written).
func TestTap_saysTransferRecordedLate(t *testing.T) {
	var said []string
	tp := &tap{say: func(mode string, size int, first bool) { said = append(said, fmt.Sprintln(mode, size, first)) }}
	line := func(mode string) []byte {
		return []byte(`{"t":"2026-12-02T00:00:00.000Z","dir":"out","msg":{"type":"reply.request","card":{"mode":"` + mode + `"}}}` + "\n")
	}
	tp.said() // the Reply returned first
	testutil.Equal(t, "said before the line", len(said), 0)
	_, err := tp.Write(line("snapshot"))
	testutil.Success(t, err)
	testutil.Equal(t, "said when recorded", said, []string{"snapshot 19 true\n"})
	_, err = tp.Write(line("patch")) // recorded first this time
	testutil.Success(t, err)
	testutil.Equal(t, "not said before its Reply returned", len(said), 1)
	tp.said()
	testutil.Equal(t, "said at once", said, []string{"snapshot 19 true\n", "patch 16 false\n"})
}
