package jcs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gowebpki/jcs"
)

const conformanceDir = "../../../../testdata/conformance/jcs"

// TestAppend_conformance: the RFC 8785 vectors (and gowebpki/jcs's
// top-level scalars) give their expected bytes, and those bytes the
// SHA-256 of expected-sha256.txt.
func TestAppend_conformance(t *testing.T) {
	t.Parallel()
	sums := map[string]string{}
	list, err := os.ReadFile(filepath.Join(conformanceDir, "expected-sha256.txt"))
	testutil.Success(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, rel, _ := strings.Cut(line, "  ")
		sums[rel] = sum
	}
	n := 0
	for _, dir := range []string{".", "gowebpki-extra"} {
		inputs, err := filepath.Glob(filepath.Join(conformanceDir, dir, "input", "*.json"))
		testutil.Success(t, err)
		for _, in := range inputs {
			src, err := os.ReadFile(in)
			testutil.Success(t, err)
			want, err := os.ReadFile(filepath.Join(conformanceDir, dir, "output", filepath.Base(in)))
			testutil.Success(t, err)
			got, err := Append(nil, src, nil)
			testutil.Success(t, err)
			testutil.Equal(t, in, string(got), string(want))
			rel := filepath.ToSlash(filepath.Join(dir, "output", filepath.Base(in)))
			if sum, ok := sums[rel]; ok {
				s := sha256.Sum256(got)
				testutil.Equal(t, rel+" sha256", hex.EncodeToString(s[:]), sum)
				n++
			}
		}
	}
	testutil.Equal(t, "vectors with a checksum", n, len(sums))
}

// TestAppendNumber_es6 checks numbers on the ES6 vector (10,000 lines)
// and RFC 8785 Appendix B, both directly and through Append.
func TestAppendNumber_es6(t *testing.T) {
	t.Parallel()
	check := func(file string) int {
		f, err := os.Open(filepath.Join(conformanceDir, "es6numbers", file))
		testutil.Success(t, err)
		defer f.Close()
		n := 0
		for s := bufio.NewScanner(f); s.Scan(); {
			fields := strings.Split(s.Text(), ",")
			bits, err := strconv.ParseUint(fields[0], 16, 64)
			testutil.Success(t, err)
			v := math.Float64frombits(bits)
			if fields[1] == "" { // NaN and Infinity cannot be written in JSON
				continue
			}
			if got := string(AppendNumber(nil, v)); got != fields[1] {
				t.Fatalf("%s: %x: got %s, want %s", file, bits, got, fields[1])
			}
			src := strconv.FormatFloat(v, 'g', -1, 64)
			got, err := Append(nil, []byte(src), nil)
			testutil.Success(t, err)
			testutil.Equal(t, src, string(got), fields[1])
			n++
		}
		return n
	}
	testutil.Equal(t, "es6 lines", check("es6testfile_10000.txt"), 10000)
	testutil.Equal(t, "appendix B", check("rfc8785-appendix-b-numbers.csv"), 24)
}

func TestAppend_errors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, pointer, msg string }{
		{`{"a":1,"b":{"x":1,"x":2}}`, "/b/x", "duplicate key"},
		{`{"name":"A","na\u006de":"B"}`, "/name", "duplicate key"},
		{"{\"a\":[\"ok\",\"\xff\"]}", "/a/1", "invalid UTF-8"},
		{"{\"a\":{\"b\xffc\":1}}", "/a", "invalid UTF-8"},
		{`{"a":"\ud800x"}`, "/a", "lone surrogate"},
		{`{"k~/":"\udead"}`, "/k~0~1", "lone surrogate"},
		{"[\"\xed\xa0\x80\"]", "/0", "invalid UTF-8"},
		{`{"a":{"b":1e400}}`, "/a/b", "out of the IEEE-754"},
		{``, "", "unexpected end"},
		{`{} {}`, "", "after the JSON value"},
		{`{"a":[1,`, "/a/1", "unexpected end"},
		{"[\"x\ny\"]", "/0", "control character"},
		{`["\x"]`, "/0", "invalid escape"},
		{`[01]`, "/0", "expected ',' or ']'"},
		{`[-]`, "/0", "invalid number"},
		{`[1.]`, "/0", "digit expected"},
		{`[1e]`, "/0", "digit expected"},
		{`[tru]`, "/0", "expected true"},
		{`{"a" 1}`, "/a", "expected ':'"},
		{`{"a":1,}`, "", "expected a string key"},
		{`[1,]`, "/1", "looking for a value"},
		{strings.Repeat("[", 600), strings.Repeat("/0", 512), "nesting deeper"},
	}
	for _, tt := range tests {
		_, err := Append(nil, []byte(tt.in), nil)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: %v is not a *SyntaxError", tt.in, err)
		}
		testutil.Equal(t, tt.in+" pointer", se.Pointer, tt.pointer)
		if !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("%q: message %q does not contain %q", tt.in, se.Msg, tt.msg)
		}
		if len(tt.in) < 100 {
			if _, jerr := jcs.Transform([]byte(tt.in)); jerr == nil {
				t.Errorf("%q: gowebpki/jcs accepts it", tt.in)
			}
		}
	}
}

func TestAppend_number(t *testing.T) {
	t.Parallel()
	var lits []string
	errStop := errors.New("stop")
	out, err := Append([]byte("x"), []byte(`[1, {"b": 2.50}, -0]`), &Options{Number: func(l []byte) error {
		lits = append(lits, string(l))
		return nil
	}})
	testutil.Success(t, err)
	testutil.Equal(t, "output", string(out), `x[1,{"b":2.5},0]`)
	testutil.Equal(t, "literals", strings.Join(lits, " "), "1 2.50 -0")
	_, err = Append(nil, []byte(`{"a":[1,2]}`), &Options{Number: func(l []byte) error {
		if string(l) == "2" {
			return errStop
		}
		return nil
	}})
	var se *SyntaxError
	testutil.ErrorAs(t, err, &se)
	testutil.ErrorIs(t, err, errStop)
	testutil.Equal(t, "pointer", se.Pointer, "/a/1")
	testutil.Equal(t, "offset", se.Offset, 8)
}

func TestCompare(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"a", "ab", -1}, {"", "a", -1},
		{"\U0001F602", "\ufb33", -1}, {"\ufb33", "\U0001F602", 1}, {"\u00e9", "\U0001F602", -1}, {"\ud7ff", "\U00010000", -1},
	} {
		got := Compare([]byte(tt.a), []byte(tt.b))
		if (got < 0) != (tt.want < 0) || (got > 0) != (tt.want > 0) {
			t.Errorf("Compare(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUnquoteAppendString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"b\`, "\u0001\t\n\u001f", "é😂\u2028", "\u007f"} {
		q := AppendString(nil, s)
		canon, err := Append(nil, q, nil)
		testutil.Success(t, err)
		testutil.Equal(t, s+" canonical", string(q), string(canon))
		testutil.Equal(t, s+" round trip", string(Unquote(nil, q[1:len(q)-1])), s)
	}
	testutil.Equal(t, "escapes", string(Unquote(nil, []byte(`a\u00e9\/\ud83d\ude02\n`))), "aé/😂\n")
}

// TestAppend_differential compares with gowebpki/jcs on random
// documents: escapes of every kind, keys whose UTF-16 and code point
// orders differ, numbers in every notation, white space, duplicates.
func TestAppend_differential(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for range 3000 {
		in := randomJSON(r, 4)
		got, err := Append(nil, in, nil)
		want, jerr := jcs.Transform(in)
		if (err == nil) != (jerr == nil) {
			t.Fatalf("%q: ours %v, jcs %v", in, err, jerr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q:\nours %q\njcs  %q", in, got, want)
		}
	}
}

var (
	genKeys    = []string{"", "a", "b", "aa", "/", "~", "é", "😂", "\ufb33", "\u0080", "x\ty", `q"`, `\`, "a\u0000"}
	genStrings = []string{"", "plain", "é", "😂", "</script>", "\n\t\u0001\u001f", "\u007f", "\u2028", `"\`}
	genNumbers = []string{"0", "-0", "1", "-1", "1.0", "1.5", "1e3", "1E+3", "1e-7", "1e21", "1e20", "123456789012345", "1234567890123456", "9007199254740993", "0.000001", "5e-324", "1.7976931348623157e308", "100e-2"}
)

func randomJSON(r *rand.Rand, depth int) []byte {
	var b []byte
	ws := func() {
		for r.IntN(4) == 0 {
			b = append(b, " \t\n\r"[r.IntN(4)])
		}
	}
	str := func(s string) {
		b = append(b, '"')
		for _, c := range s {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', byte(c))
			case c < 0x20 || r.IntN(5) == 0:
				if c >= 0x10000 {
					c -= 0x10000
					b = fmt.Appendf(b, `\u%04x\u%04X`, 0xD800+(c>>10), 0xDC00+(c&0x3FF))
				} else {
					b = fmt.Appendf(b, `\u%04x`, c)
				}
			default:
				b = append(b, string(c)...)
			}
		}
		b = append(b, '"')
	}
	var value func(d int)
	value = func(d int) {
		ws()
		switch k := r.IntN(8); {
		case k == 0 && d > 0:
			b = append(b, '{')
			for i, n := 0, r.IntN(6); i < n; i++ {
				if i > 0 {
					b = append(b, ',')
				}
				ws()
				str(genKeys[r.IntN(len(genKeys))])
				ws()
				b = append(b, ':')
				value(d - 1)
			}
			b = append(b, '}')
		case k == 1 && d > 0:
			b = append(b, '[')
			for i, n := 0, r.IntN(5); i < n; i++ {
				if i > 0 {
					b = append(b, ',')
				}
				value(d - 1)
			}
			b = append(b, ']')
		case k < 4:
			str(genStrings[r.IntN(len(genStrings))])
		case k < 6:
			b = append(b, genNumbers[r.IntN(len(genNumbers))]...)
		default:
			b = append(b, []string{"true", "false", "null"}[r.IntN(3)]...)
		}
		ws()
	}
	value(depth)
	return b
}
