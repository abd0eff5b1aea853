package peertext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #16: peer text reached logs whole and terminals raw.
func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"plain", "enginetest 1.2", 256, "enginetest 1.2"},
		{"empty", "", 256, ""},
		{"unicode kept", "Привет, 世界 ✓", 256, "Привет, 世界 ✓"},
		{"ideographic space kept", "a\u3000b", 256, "a\u3000b"},
		{"window title (OSC)", "\x1b]0;pwned\x07", 256, `\x1b]0;pwned\x07`},
		{"clear screen (CSI)", "\x1b[2J\x1b[H", 256, `\x1b[2J\x1b[H`},
		{"8-bit CSI and OSC", "a\u009b2Jb\u009d0;x\u009c", 256, `a\u009b2Jb\u009d0;x\u009c`},
		{"raw 8-bit CSI byte", "a\x9b2J", 256, `a\x9b2J`},
		{"newline and CR", "line1\r\nline2", 256, `line1\r\nline2`},
		{"tab and NUL and DEL", "a\tb\x00c\x7f", 256, `a\tb\x00c\x7f`},
		{"bidi override", "abc\u202edcba", 256, `abc\u202edcba`},
		{"line separator", "a\u2028b", 256, `a\u2028b`},
		{"backslash kept", `a\x1b`, 256, `a\x1b`},
		{"bounded", strings.Repeat("a", 300), 256, strings.Repeat("a", 256) + "…(+44 bytes)"},
		{"bound at a character boundary", "aé", 2, "a…(+2 bytes)"},
		{"first character longer than the bound", "世界", 1, "世…(+3 bytes)"},
		{"bound counts the peer's bytes, not the escapes", "\x1b\x1b\x1b", 2, `\x1b\x1b…(+1 bytes)`},
		{"limit below 1", "abc", 0, "a…(+2 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testutil.Equal(t, "Clip", Clip(tt.in, tt.limit), tt.want)
		})
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"plain", "/rp-engine/socket", 256, `"/rp-engine/socket"`},
		{"escapes", "\x1b[2J\"\\", 256, `"\x1b[2J\"\\"`},
		{"bounded", strings.Repeat("/a", 30<<10), 8, `"/a/a/a/a"…(+61432 bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testutil.Equal(t, "Quote", Quote(tt.in, tt.limit), tt.want)
		})
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "I hear you.\nYou said: hi", "I hear you.\nYou said: hi"},
		{"tabs, unicode, backslashes and emoji kept", "a\tb é 世 \\n 👩\u200d👩\u200d👧", "a\tb é 世 \\n 👩\u200d👩\u200d👧"},
		{"ESC, CSI and OSC escaped", "hi\x1b[2J\x1b]0;title\x07!", `hi\x1b[2J\x1b]0;title\x07!`},
		{"8-bit forms escaped", "a\u009b2J\x9b", `a\u009b2J\x9b`},
		{"carriage return escaped", "a\rb", `a\rb`},
		{"bidi escaped", "a\u2066b", `a\u2066b`},
		{"long text not bounded", strings.Repeat("x", 100000), strings.Repeat("x", 100000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testutil.Equal(t, "Text", Text(tt.in), tt.want)
		})
	}
}

// unsafe reports what in out a terminal could interpret: a control
// character other than those allowed, a bidi control or invalid UTF-8.
func unsafe(out string, allow string) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for _, r := range out {
		if (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f) && !strings.ContainsRune(allow, r) {
			return "control " + strconv.QuoteRune(r)
		}
		if bidi(r) {
			return "bidi control " + strconv.QuoteRune(r)
		}
	}
	return ""
}

// FuzzPeerText checks the promises on any input: nothing a terminal
// interprets comes out, Clip and Quote stay within their bound, Quote
// unquotes to a prefix of the input, and text that needs no escaping
// comes out unchanged.
func FuzzPeerText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;x\x07", "a\u009bb", "\xff\xfe", "é世👩\u200d👧", "a\u202eb\r\n\t", strings.Repeat("é", 200)} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = limit%600 - 50 // include limits below 1
		c := Clip(s, limit)
		if why := unsafe(c, ""); why != "" {
			t.Fatalf("Clip(%q, %d) = %q: %s", s, limit, c, why)
		}
		if n := 4*max(limit, 4) + 32; len(c) > n {
			t.Fatalf("Clip(%q, %d) is %d bytes, over %d", s, limit, len(c), n)
		}
		q := Quote(s, limit)
		if why := unsafe(q, ""); why != "" {
			t.Fatalf("Quote(%q, %d) = %q: %s", s, limit, q, why)
		}
		end := strings.LastIndexByte(q, '"')
		head, err := strconv.Unquote(q[:end+1])
		if err != nil || !strings.HasPrefix(s, head) {
			t.Fatalf("Quote(%q, %d) = %q does not quote a prefix (%v)", s, limit, q, err)
		}
		x := Text(s)
		if why := unsafe(x, "\n\t"); why != "" {
			t.Fatalf("Text(%q) = %q: %s", s, x, why)
		}
		if unsafe(s, "\n\t") == "" && x != s {
			t.Fatalf("Text(%q) = %q changed safe text", s, x)
		}
		if len(s) <= max(limit, 1) && unsafe(s, "") == "" && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsGraphic(r) }) && c != s {
			t.Fatalf("Clip(%q, %d) = %q changed graphic text", s, limit, c)
		}
	})
}

// BenchmarkClip clips a UUID (the common case: no copy) and a 1 MiB value
// with ESC sequences, against strconv.Quote of the same UUID, measured in
// the same run.
func BenchmarkClip(b *testing.B) {
	const id = "0f8e2c1a-6a6e-4a57-9d7e-1f2b3c4d5e6f"
	huge := "\x1b]0;t\x07" + strings.Repeat("a", 1<<20)
	b.Run("uuid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Clip(id, LogBytes)
		}
	})
	b.Run("1MiB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Clip(huge, LogBytes)
		}
	})
	b.Run("reference_strconv.Quote_uuid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = strconv.Quote(id)
		}
	})
}

// BenchmarkText escapes a 4 KiB reply (no escape needed: no copy) against
// copying it (strings.Clone), measured in the same run.
func BenchmarkText(b *testing.B) {
	reply := strings.Repeat("I hear you. You said: hello there, é世. ", 100)
	b.Run("reply", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(reply)))
		for b.Loop() {
			_ = Text(reply)
		}
	})
	b.Run("reference_strings.Clone", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(reply)))
		for b.Loop() {
			_ = strings.Clone(reply)
		}
	})
}
