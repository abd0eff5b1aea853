package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/rivo/uniseg"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// typeLine feeds keys to an editor on a terminal width columns wide and
// returns the line entered and everything drawn.
func typeLine(t *testing.T, width int, keys string) (line, screen string) {
	t.Helper()
	var out bytes.Buffer
	e := newEditorOn(strings.NewReader(keys), &out, func() int { return width }, func() error { return nil }, nil)
	e.Prompt("[status]", " you> ")
	line, _, err := e.ReadLine()
	testutil.Success(t, err)
	return line, out.String()
}

// Issue #32 (item 7): the cursor moves, and Backspace and Delete remove,
// whole grapheme clusters: a flag, an emoji with a skin tone, a family
// joined by ZWJ, a letter with a combining mark (also typed after it).
func TestEditor_graphemeClusters(t *testing.T) {
	t.Parallel()
	const (
		left, home, del, bs = "\x1b[D", "\x1b[H", "\x1b[3~", "\x7f"
		flag, thumb, family = "🇯🇵", "👍🏽", "👨\u200d👩\u200d👧"
	)
	for _, tc := range []struct{ name, keys, want string }{
		{"Backspace takes a flag whole", "a" + flag + bs + "\r", "a"},
		{"Backspace takes a skin tone with its emoji", thumb + "b" + left + bs + "\r", "b"},
		{"Delete takes a family whole", family + "c" + home + del + "\r", "c"},
		{"Left steps over a family", family + "d" + left + left + "x\r", "x" + family + "d"},
		{"a combining mark typed joins its letter", "e\u0301" + left + "x\r", "xe\u0301"},
		{"a combining mark typed after a move joins too", "ab" + left + "\u0301" + left + "x\r", "xa\u0301b"},
		{"a joiner typed builds one cluster", "👨\u200d👩" + left + "x\r", "x👨\u200d👩"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			line, _ := typeLine(t, 80, tc.keys)
			testutil.Equal(t, "line", line, tc.want)
		})
	}
}

// The editing keys: words, line ends, kills, and the history.
func TestEditor_keys(t *testing.T) {
	t.Parallel()
	const (
		up, down, wordLeft, wordRight            = "\x1b[A", "\x1b[B", "\x1b[1;3D", "\x1b[1;3C"
		ctrlA, ctrlE, ctrlW, ctrlU, ctrlK, ctrlC = "\x01", "\x05", "\x17", "\x15", "\x0b", "\x03"
	)
	var out bytes.Buffer
	keys := "one two three" + wordLeft + wordLeft + ctrlK + "\r" + // one
		"alpha beta" + ctrlW + "gamma\r" + // alpha gamma
		"junk" + ctrlU + "x" + ctrlA + "<" + ctrlE + ">\r" + // <x>
		"typed" + up + up + down + ctrlE + "!\r" + // <x>!
		"half" + up + down + wordLeft + "(" + wordRight + ")\r" + // (half)
		"gone" + ctrlC + "kept\r"
	var interrupts int
	e := newEditorOn(strings.NewReader(keys), &out, func() int { return 80 }, func() error { return nil },
		func(bool) { interrupts++ })
	var lines []string
	for {
		line, _, err := e.ReadLine()
		if err == io.EOF {
			break
		}
		testutil.Success(t, err)
		lines = append(lines, line)
	}
	testutil.Equal(t, "lines", lines, []string{"one ", "alpha gamma", "<x>", "<x>!", "(half)", "kept"})
	testutil.Equal(t, "interrupts (Ctrl-C cleared a line)", interrupts, 0)
}

// Issue #32 (item 8): Ctrl-C at an empty line calls the interrupt
// function, saying whether the key before was that same Ctrl-C; Ctrl-D
// at an empty line ends the input, and elsewhere deletes.
func TestEditor_ctrlCAndD(t *testing.T) {
	t.Parallel()
	var again []bool
	e := newEditorOn(strings.NewReader("\x03\x03a\x7f\x03ab\x01\x04\r\x04"), io.Discard, func() int { return 80 },
		func() error { return nil }, func(a bool) { again = append(again, a) })
	line, _, err := e.ReadLine()
	testutil.Success(t, err)
	testutil.Equal(t, "line", line, "b")
	testutil.Equal(t, "interrupts", again, []bool{false, true, false})
	_, _, err = e.ReadLine()
	testutil.ErrorIs(t, err, io.EOF)
}

// csi matches the escape sequences the editor draws with.
var csi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// Issue #32 (item 7): the prompt row never reaches the terminal's last
// column, whatever its width and the line's: the prompt is clipped and
// the line scrolls, keeping the cursor in view.
func TestEditor_rowFits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("日本語 and some words ", 8)
	for _, width := range []int{12, 20, 40, 80} {
		_, screen := typeLine(t, width, long+"\x1b[D\x1b[D\x01\x05\r")
		for _, draw := range strings.Split(screen, "\r") {
			if strings.HasSuffix(draw, "\n") {
				continue // the line entered, kept whole
			}
			if w := uniseg.StringWidth(csi.ReplaceAllString(draw, "")); w > width-1 {
				t.Errorf("%d columns: a row of %d columns drawn: %q", width, w, draw)
			}
		}
	}
}

// BenchmarkEditor_paste pastes a line of n characters, as a terminal
// sends it (4 KiB reads), and enters it: the cost grows linearly with n.
func BenchmarkEditor_paste(b *testing.B) {
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10} {
		keys := "\x1b[200~" + strings.Repeat("日本 abc ", n/8)[:n] + "\x1b[201~\r"
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				e := newEditorOn(&chunked{s: keys}, io.Discard, func() int { return 80 }, func() error { return nil }, nil)
				if _, _, err := e.ReadLine(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// chunked reads s 4 KiB at a time, as a terminal delivers a paste.
type chunked struct{ s string }

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 4096)], c.s)
	c.s = c.s[n:]
	return n, nil
}
