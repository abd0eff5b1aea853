package card

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gowebpki/jcs"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

const cardsDir = "../../testdata/cards"

func readCard(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cardsDir, name))
	testutil.Success(t, err)
	return b
}

func mustParse(t testing.TB, s string) *Card {
	t.Helper()
	c, err := Parse([]byte(s))
	testutil.Success(t, err)
	return c
}

func TestParse_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, pointer, msg string
	}{
		{"duplicate key", `{"a":1,"b":{"x":1,"x":2}}`, "/b/x", "duplicate key"},
		{"duplicate after unescape", `{"data":{"name":"A","na\u006de":"B"}}`, "/data/name", "duplicate key"},
		{"invalid utf-8", "{\"a\":[\"ok\",\"\xff\"]}", "/a/1", "invalid UTF-8"},
		{"invalid utf-8 in a short key", "{\"a\":{\"b\xffc\":1,\"padding_padding\":2}}", "/a", "invalid UTF-8"}, // Issue #24
		{"lone high surrogate", `{"a":"\ud800x"}`, "/a", "lone surrogate"},
		{"lone low surrogate", `{"k~/":"\udead"}`, "/k~0~1", "lone surrogate"},
		{"surrogate encoded in utf-8", "{\"a\":\"\xed\xa0\x80\"}", "/a", "invalid UTF-8"},
		{"number out of range", `{"a":{"b":1e400}}`, "/a/b", "out of the IEEE-754"},
		{"root array", `[1]`, "", "must be a JSON object"},
		{"root string", `"x"`, "", "must be a JSON object"},
		{"empty", ``, "", "empty input"}, // Issue #32
		{"white space", " \n", "", "empty input"},
		{"truncated in a string", `{"data":{"name":"Cut`, "/data/name", "unexpected end of input"}, // Issue #32
		{"truncated after a comma", `{"spec":"chara_card_v2",`, "", "unexpected end of input"},
		{"trailing data", `{} {}`, "", "after the JSON value"},
		{"truncated", `{"a":[1,`, "/a/1", "unexpected end"},
		{"raw control character", "{\"a\":\"x\ny\"}", "/a", "control character"},
		{"bad escape", `{"a":"\x"}`, "/a", "invalid escape"},
		{"leading zero", `{"a":01}`, "/a", "expected ',' or '}'"},
		{"bare minus", `{"a":-}`, "/a", "invalid number"},
		{"deep nesting", `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, "/a" + strings.Repeat("/0", 511), "nesting deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.in))
			var pe *ParseError
			testutil.ErrorAs(t, err, &pe)
			testutil.Equal(t, "pointer", pe.Pointer, tt.pointer)
			if !strings.Contains(pe.Msg, tt.msg) {
				t.Fatalf("message %q does not contain %q", pe.Msg, tt.msg)
			}
		})
	}
}

func TestParse_tooLarge(t *testing.T) {
	t.Parallel()
	big := make([]byte, MaxSize+1)
	_, err := Parse(big)
	testutil.ErrorIs(t, err, ErrTooLarge)
}

func TestParse_keepsBytes(t *testing.T) {
	t.Parallel()
	in := readCard(t, "full.json")
	c, err := Parse(in)
	testutil.Success(t, err)
	testutil.Equal(t, "bytes", c.Bytes(), in)
	in[0] = 'X' // Parse copied its input
	testutil.Equal(t, "first byte", c.Bytes()[0], byte('{'))
	testutil.Equal(t, "name", c.Name(), "Captain Mira Vance")
}

func TestCard_Name(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, want string }{
		{"plain", `{"data":{"name":"Ari"}}`, "Ari"},
		{"escaped", `{"data":{"name":"\u00c1ri \ud83d\ude00"}}`, "Ári 😀"},
		{"other case after name", `{"data":{"name":"Ari","NAME":"Bo"}}`, "Ari"},
		{"only another case", `{"data":{"Name":"Bo"}}`, ""},
		{"data in another case", `{"DATA":{"name":"Bo"}}`, ""},
		{"not a string", `{"data":{"name":7}}`, ""},
		{"data not an object", `{"data":[]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testutil.Equal(t, "name", mustParse(t, tt.doc).Name(), tt.want)
		})
	}
}

func TestCard_CheckNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, pointer, literal string }{
		{`{"a":[1,-2,9007199254740992,-9007199254740992,"1.5"]}`, "", ""},
		{`{"a":{"b":1.0}}`, "/a/b", "1.0"},
		{`{"a":1e21}`, "/a", "1e21"},
		{`{"a":[0,1E2]}`, "/a/1", "1E2"},
		{`{"a":9007199254740993}`, "/a", "9007199254740993"},
		{`{"a":-9007199254740993}`, "/a", "-9007199254740993"},
		{`{"a":12345678901234567890}`, "/a", "12345678901234567890"},
		{`{"a":-0}`, "/a", "-0"},
		{`{"x/y":{"~":0.5}}`, "/x~1y/~0", "0.5"},
		{`{"z":1,"a":2.5,"b":3.5}`, "/a", "2.5"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			for _, pass := range []string{"first parse", "second parse"} {
				err := mustParse(t, tt.in).CheckNumbers()
				if tt.pointer == "" && tt.literal == "" {
					testutil.Success(t, err)
					continue
				}
				var ue *UnsafeNumberError
				testutil.ErrorAs(t, err, &ue)
				testutil.Equal(t, pass+": pointer", ue.Pointer, tt.pointer)
				testutil.Equal(t, pass+": literal", ue.Literal, tt.literal)
			}
		})
	}
}

func TestParseDigest(t *testing.T) {
	t.Parallel()
	good := "71981de431e9b5327456a39a3eed23fb6eabb68efdd050f271c222f6f50a8b31"
	d, err := ParseDigest(good)
	testutil.Success(t, err)
	testutil.Equal(t, "round trip", d.String(), good)
	for _, bad := range []string{"", good[:63], good + "0", strings.ToUpper(good), "sha256-canonical-card-hash", good[:63] + "g", "0x" + good[2:]} {
		_, err := ParseDigest(bad)
		testutil.Error(t, err)
	}
}

// TestCard_Hash_oracle compares the hash of every card we have with
// jcs.Transform + SHA-256.
func TestCard_Hash_oracle(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(cardsDir, "*.json"))
	if dir := sharedCards(t); dir != "" {
		shared, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		files = append(files, shared...)
	}
	n := 0
	for _, f := range files {
		in, err := os.ReadFile(f)
		testutil.Success(t, err)
		want, jerr := jcs.Transform(in)
		got, err := AppendCanonical(nil, in)
		if strings.HasPrefix(filepath.Base(f), "malformed-") {
			testutil.Error(t, err)
			testutil.Error(t, jerr)
			continue
		}
		testutil.Success(t, err)
		testutil.Success(t, jerr)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: canonical form differs from jcs", f)
		}
		n++
	}
	if n < 12 {
		t.Fatalf("only %d cards checked", n)
	}
}

func sharedCards(t *testing.T) string {
	var dir string
	t.Run("shared", func(t *testing.T) { dir = testutil.SharedDir(t, "cards") })
	return dir
}

// Parsing the same bytes again gives the same hash and violations.
func TestParse_again(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"minimal.json", "cjk-emoji.json", "broken-v3.json"} {
		in := readCard(t, name)
		a, b := mustParse(t, string(in)), mustParse(t, string(in))
		testutil.Equal(t, name+" digest", a.Hash(), b.Hash())
		testutil.Equal(t, name+" violations", a.Validate(), b.Validate())
	}
}

func TestAppendCanonical_allocs(t *testing.T) {
	testutil.SkipAllocs(t)
	in := readCard(t, "full.json")
	dst := make([]byte, 0, 2*len(in))
	for i := 0; i < 20; i++ { // warm the pool
		_, _ = AppendCanonical(dst[:0], in)
	}
	n := testing.AllocsPerRun(50, func() { _, _ = AppendCanonical(dst[:0], in) })
	testutil.Equal(t, "allocs", n, 0.0)
	c := mustParse(t, string(in))
	n = testing.AllocsPerRun(50, func() { _ = c.Hash() })
	testutil.Equal(t, "Hash allocs", n, 0.0)
}

func TestAppendCanonical_errorsMatchJCS(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"a":1,"\u0061":2}`, `["\uDEAD"]`, `[1e400]`, ``, `[1] x`, `{"a":1,}`, `[01]`, `tru`, `"\u00"`, "\"\xc3\x28\""} {
		_, err := AppendCanonical(nil, []byte(in))
		_, jerr := jcs.Transform([]byte(in))
		if (err == nil) != (jerr == nil) {
			t.Errorf("%q: ours %v, jcs %v", in, err, jerr)
		}
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("%q: %T is not a *ParseError", in, err)
		}
	}
}

// Issue #17: a card is built from Go values without learning its 14
// required fields by trial: New fills every empty one, and the card
// validates with a name alone.
func TestNew(t *testing.T) {
	t.Parallel()
	c, err := New(Data{Name: "Ari"})
	testutil.Success(t, err)
	testutil.Success(t, c.Validate())
	testutil.Equal(t, "name", c.Name(), "Ari")
	testutil.Equal(t, "document", string(c.Bytes()), `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"",`+
		`"personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"",`+
		`"alternate_greetings":[],"tags":[],"creator":"","character_version":"","extensions":{}}}`)

	full, err := New(Data{Name: "Bram", Description: "A smith.", FirstMessage: "Need a blade?", Tags: []string{"smith"},
		Extensions: map[string]any{"game": map[string]int{"level": 3}}})
	testutil.Success(t, err)
	p, err := Parse(full.Bytes())
	testutil.Success(t, err)
	testutil.Equal(t, "same card from its bytes", p.Hash(), full.Hash())

	_, err = New(Data{Name: " "})
	var ve *ValidationError
	testutil.ErrorAs(t, err, &ve)
	testutil.Equal(t, "one prefix", strings.Count(err.Error(), "card: "), 1)
	_, err = New(Data{Name: "X", Extensions: map[string]any{"f": func() {}}})
	testutil.Error(t, err)
}

// Issue #34: every exported function that takes bytes refuses a document
// (or patch) over MaxSize before it reads it, with an error matching
// ErrTooLarge. The bytes are not JSON: read, they would give another
// error. ApplyPatch returned a 64 MiB document with the empty patch.
func TestMaxSize_everyEntryPoint(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte{'x'}, MaxSize+1)
	bigPNG := append(append([]byte(nil), pngSignature...), big[len(pngSignature):]...)
	bigArray := append(append([]byte{'['}, bytes.Repeat([]byte{' '}, MaxSize)...), ']') // valid JSON
	small := []byte(`{}`)
	tests := []struct {
		name string
		call func() error
	}{
		{"Parse", func() error { _, err := Parse(big); return err }},
		{"Load", func() error { _, _, err := Load(big); return err }},
		{"Load of a PNG", func() error { _, _, err := Load(bigPNG); return err }},
		{"Repair", func() error { _, _, err := Repair(big); return err }},
		{"AppendCanonical", func() error { _, err := AppendCanonical(nil, bigArray); return err }},
		{"ApplyPatch document", func() error { _, err := ApplyPatch(bigArray, []byte(`[]`)); return err }},
		{"ApplyPatch patch", func() error { _, err := ApplyPatch(small, bigArray); return err }},
		{"ExtractPNG", func() error { _, err := ExtractPNG(bigPNG); return err }},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want an error matching ErrTooLarge", tt.name, err)
		}
	}
	// At the limit, the same bytes are read.
	at := bigArray[2:] // MaxSize bytes: spaces and the closing bracket
	at[0] = '['
	if _, err := AppendCanonical(nil, at); err != nil {
		t.Errorf("a document of MaxSize bytes: %v", err)
	}
}
