package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gowebpki/jcs"
)

// docGen writes random JSON text with the features that make
// canonicalization hard: escapes of every kind, surrogate pairs, keys whose
// UTF-16 and code point orders differ, numbers in every notation, and
// arbitrary whitespace.
type docGen struct {
	r *rand.Rand
	b []byte
}

var genKeys = []string{"", "a", "b", "A", "aa", "/", "~", "a/b", "m~n", "0", "-", "é", "e\u0301", "😂", "\ufb33", "\u007f", "\u0080", "\u2028", "中", "\U0001F600x", "x\ty", `q"`, `\`}

var genStrings = []string{"", "plain", "é", "😂", "\ufb33", "</script>", "line\nbreak", "tab\t", "\u0001\u001f", "\u007f", "\u2028\u2029", "中文", "A\u030a", `"quoted"`, `back\slash`, "\U0010FFFF"}

var genNumbers = []string{"0", "-0", "1", "-1", "42", "1.0", "1.5", "-2.50", "1e3", "1E+3", "1e-7", "1e21", "1e20", "123456789012345", "1234567890123456", "9007199254740993", "12345678901234567890", "0.1", "0.000001", "0.0000001", "5e-324", "1.7976931348623157e308", "3.14159", "-1e-2", "100e-2", "2e0"}

func (g *docGen) ws() {
	for g.r.IntN(4) == 0 {
		g.b = append(g.b, " \t\n\r"[g.r.IntN(4)])
	}
}

func (g *docGen) str(s string) {
	g.b = append(g.b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			g.b = append(g.b, '\\', byte(r))
		case r < 0x20 || g.r.IntN(5) == 0:
			g.escape(r)
		default:
			g.b = utf8.AppendRune(g.b, r)
		}
	}
	g.b = append(g.b, '"')
}

func (g *docGen) escape(r rune) {
	short := map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '/': `\/`, '"': `\"`, '\\': `\\`}
	if s, ok := short[r]; ok && g.r.IntN(2) == 0 {
		g.b = append(g.b, s...)
		return
	}
	hex := "%04x"
	if g.r.IntN(2) == 0 {
		hex = "%04X"
	}
	if r >= 0x10000 {
		r -= 0x10000
		g.b = fmt.Appendf(g.b, `\u`+hex+`\u`+hex, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		return
	}
	g.b = fmt.Appendf(g.b, `\u`+hex, r)
}

func (g *docGen) value(depth int) {
	g.ws()
	k := g.r.IntN(8)
	if depth <= 0 && k < 2 {
		k += 2
	}
	switch k {
	case 0:
		g.object(depth - 1)
	case 1:
		g.b = append(g.b, '[')
		n := g.r.IntN(5)
		for i := 0; i < n; i++ {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.value(depth - 1)
		}
		g.ws()
		g.b = append(g.b, ']')
	case 2, 3:
		g.str(genStrings[g.r.IntN(len(genStrings))])
	case 4, 5:
		g.b = append(g.b, genNumbers[g.r.IntN(len(genNumbers))]...)
	default:
		g.b = append(g.b, []string{"true", "false", "null"}[g.r.IntN(3)]...)
	}
	g.ws()
}

func (g *docGen) object(depth int) {
	g.b = append(g.b, '{')
	keys := g.r.Perm(len(genKeys))[:g.r.IntN(6)]
	for i, ki := range keys {
		if i > 0 {
			g.b = append(g.b, ',')
		}
		g.ws()
		g.str(genKeys[ki])
		g.ws()
		g.b = append(g.b, ':')
		g.value(depth)
	}
	g.ws()
	g.b = append(g.b, '}')
}

func checkAgainstJCS(t testing.TB, in []byte) {
	got, err := AppendCanonical(nil, in)
	want, jerr := jcs.Transform(in)
	if (err == nil) != (jerr == nil) {
		t.Fatalf("%q: ours %v, jcs %v", in, err, jerr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%q:\nours %q\njcs  %q", in, got, want)
	}
	again, err := AppendCanonical(nil, got)
	if err != nil || !bytes.Equal(again, got) {
		t.Fatalf("%q: canonical form is not a fixed point: %q %v", in, again, err)
	}
}

// TestAppendCanonical_differential compares with gowebpki/jcs on random
// documents.
func TestAppendCanonical_differential(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := &docGen{r: rand.New(rand.NewPCG(seed, 2))}
	for i := 0; i < 3000; i++ {
		g.b = g.b[:0]
		g.value(4)
		checkAgainstJCS(t, g.b)
	}
}

func FuzzAppendCanonical(f *testing.F) {
	for _, dir := range []string{"jcs/input", "jcs/gowebpki-extra/input"} {
		files, _ := filepath.Glob(filepath.Join(conformanceDir, dir, "*.json"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{`{"a":1,"\u0061":2}`, `["\ud83d\ude02","\ufb33"]`, `[1e400]`, `[-0,1E+2,0.1]`, `"\u00"`} {
		f.Add([]byte(s))
	}
	// Objects of one shape in a row, as lorebook entries are.
	f.Add([]byte(`[{"k":["a","b"],"c":"x","e":{"w":1},"b":true,"s":[]},{"k":["c"],"c":"y","e":{},"b":false,"s":[]},{"k":[],"c":"z","e":{"a":0,"w":2},"b":null,"s":["d"]}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) > 400 {
			return // nesting limits differ on purpose
		}
		checkAgainstJCS(t, in)
	})
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(cardsDir, "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := Parse(in)
		if err != nil {
			return
		}
		_ = c.Validate()
		_ = c.CheckNumbers()
		_ = c.Name()
		want, err := jcs.Transform(in)
		if err != nil {
			t.Fatalf("Parse accepted what jcs rejects: %v", err)
		}
		if d := c.Hash(); d != Digest(sha256.Sum256(want)) {
			t.Fatal("hash differs from jcs + SHA-256")
		}
		if (c.Validate() == nil) != (len(validate(want)) == 0) {
			t.Fatalf("Parse's rule check and the validator disagree: %v", c.Validate())
		}
		if r, _, err := Repair(in); err == nil {
			testutil.Success(t, r.Validate())
		}
	})
}

// FuzzApplyPatch: no panic; a result is canonical, and equals
// evanphx/json-patch's where that oracle can be asked (evanphxApply).
func FuzzApplyPatch(f *testing.F) {
	for _, file := range []string{"tests.json", "spec_tests.json"} {
		for _, r := range loadPatchSuite(f, file) {
			f.Add([]byte(r.Doc), []byte(r.Patch))
		}
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		out, err := ApplyPatch(doc, patch)
		if err != nil {
			return
		}
		again, err := AppendCanonical(nil, out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("result is not canonical: %q", out)
		}
		if want, ok := evanphxApply(t, doc, patch); ok && !bytes.Equal(out, want) {
			t.Fatalf("%q + %q:\nours    %s\nevanphx %s", doc, patch, out, want)
		}
	})
}

// TestDiff_differential: random pairs of documents; the verified patch,
// applied by evanphx behind ApplyPatch, gives the target.
func TestDiff_differential(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	g := &docGen{r: r}
	gen := func() *Card {
		for {
			g.b = g.b[:0]
			g.object(3)
			if c, err := Parse(g.b); err == nil {
				return c
			}
		}
	}
	for i := 0; i < scaled(1500); i++ {
		a := gen()
		b := mutate(t, r, a)
		patch, err := Diff(a, b)
		if err != nil {
			t.Fatalf("%s -> %s: %v", a.Bytes(), b.Bytes(), err)
		}
		out, err := ApplyPatch(a.Bytes(), patch)
		if err != nil {
			t.Fatalf("%s + %s: %v", a.Bytes(), patch, err)
		}
		want, _ := AppendCanonical(nil, b.Bytes())
		if !bytes.Equal(out, want) {
			t.Fatalf("%s + %s = %s, want %s", a.Bytes(), patch, out, want)
		}
	}
}

// mutate derives a related document: values replaced, members added or
// dropped, array elements inserted or removed.
func mutate(t *testing.T, r *rand.Rand, c *Card) *Card {
	var v any
	testutil.Success(t, json.Unmarshal(c.Bytes(), &v))
	var walk func(x any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				switch r.IntN(6) {
				case 0:
					delete(x, k)
				case 1:
					x[k] = "changed"
				default:
					x[k] = walk(e)
				}
			}
			if r.IntN(3) == 0 {
				x[genKeys[r.IntN(len(genKeys))]] = []any{1.0, "new"}
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			switch r.IntN(4) {
			case 0:
				if len(x) > 0 {
					i := r.IntN(len(x))
					x = append(x[:i], x[i+1:]...)
				}
			case 1:
				i := r.IntN(len(x) + 1)
				x = append(x[:i], append([]any{strconv.Itoa(i)}, x[i:]...)...)
			}
			return x
		}
		if r.IntN(5) == 0 {
			return map[string]any{"was": x}
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	testutil.Success(t, err)
	if !json.Valid(b) {
		t.Fatalf("bad mutation %s", b)
	}
	m, err := Parse(b)
	testutil.Success(t, err)
	return m
}

// TestAppendCanonical_repeatedShapes: objects of one shape in a row, with
// keys changed, reordered, duplicated or escaped.
func TestAppendCanonical_repeatedShapes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`[{"b":1,"a":2},{"b":3,"a":4},{"a":5,"b":6},{"b":7,"a":8,"c":9},{"c":1,"b":1,"a":1},{"b":1,"a":2}]`,
		`[{"b":1,"a":2},{"b":1,"b":2}]`,
		`[{"b":1,"a":1},{"b":1,"a":1,"a":2}]`,
		`[{"b":1,"a":1},{"b":1,"\u0061":1}]`,
		`[{"y":1,"x":1},{"y":{"b":1,"a":1},"x":[{"y":1,"x":1}]},{"y":1,"x":1},{"yy":1,"x":1},{"y":1,"xx":1}]`,
		`[{"😂":1,"\ufb33":2},{"\ufb33":1,"😂":2},{"😂":1,"\ufb33":2}]`,
	} {
		checkAgainstJCS(t, []byte(in))
	}
	g := &docGen{r: rand.New(rand.NewPCG(7, 7))}
	for i := 0; i < 200; i++ {
		g.b = append(g.b[:0], '[')
		g.object(1)
		shape := string(g.b[1:])
		for j := 0; j < 5; j++ {
			g.b = append(g.b, ',')
			g.b = append(g.b, shape...)
		}
		g.b = append(g.b, ']')
		checkAgainstJCS(t, g.b)
	}
}
