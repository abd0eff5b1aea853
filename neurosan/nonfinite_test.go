package neurosan

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #25: Python writes NaN, Infinity and -Infinity.
func Test_rewriteNonFinite(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, rw string }{
		{`{"a":NaN,"b":[Infinity,-Infinity]}`, `{"a":0E0,"b":[1E+00000,-1E+00000]}`},
		{`{"s":"NaN Infinity E","n":1E5}`, `{"s":"NaN Infinity E","n":1E5}`}, // nothing to rewrite: left as it is
		{`{"n":1E5,"x":NaN}`, `{"n":1e5,"x":0E0}`},                           // E lowercased, so that only markers have one
		{`{"s":"q\"NaN\\","t":NaN}`, `{"s":"q\"NaN\\","t":0E0}`},
		{`{"a": NaN , "b" : -Infinity}`, `{"a": 0E0 , "b" : -1E+00000}`},
		{`[Nope, Inf, NaNa]`, `[Nope, Inf, 0E0a]`}, // not tokens: left for the decoder to refuse
		{`{"a":1}`, `{"a":1}`},
	}
	for _, tc := range tests {
		rw, n := rewriteNonFinite([]byte(tc.in))
		testutil.Equal(t, tc.in, string(rw), tc.rw)
		testutil.Equal(t, "length kept", len(rw), len(tc.in))
		if n > 0 {
			back := bytes.Clone(rw)
			restoreNonFinite(back)
			testutil.Equal(t, "restored "+tc.in, string(back), strings.ReplaceAll(tc.in, "1E5", "1e5"))
		}
	}
}

// A stream rewritten byte by byte is the same as one rewritten whole, and
// NaN split across reads is still found.
func Test_nfReader(t *testing.T) {
	t.Parallel()
	in := `{"a":NaN}{"b":[-Infinity,"Infinity"]}` + "\n" + `{"c":Nope}`
	whole, err := io.ReadAll(newNFReader(strings.NewReader(in)))
	testutil.Success(t, err)
	one, err := io.ReadAll(newNFReader(iotest.OneByteReader(strings.NewReader(in))))
	testutil.Success(t, err)
	testutil.Equal(t, "same", string(one), string(whole))
	tiny, err := io.ReadAll(iotest.OneByteReader(newNFReader(strings.NewReader(in))))
	testutil.Success(t, err)
	testutil.Equal(t, "one byte at a time out", string(tiny), string(whole))
	testutil.Equal(t, "rewritten", string(whole), `{"a":0E0}{"b":[-1E+00000,"Infinity"]}`+"\n"+`{"c":Nope}`)
	// Held-back bytes are given back at the end of a stream cut inside one.
	cut, err := io.ReadAll(newNFReader(strings.NewReader(`{"a":Infin`)))
	testutil.Success(t, err)
	testutil.Equal(t, "cut", string(cut), `{"a":Infin`)
}

func TestUnmarshal(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	type Inner struct {
		F *float64 `json:"f"`
	}
	type Embedded struct{ Deep float64 }
	type S struct {
		Embedded
		Score  float64            `json:"score"`
		Ptr    *float64           `json:"ptr"`
		Small  float32            `json:"small"`
		List   []float64          `json:"list"`
		Pair   [2]float64         `json:"pair"`
		Map    map[string]float64 `json:"map"`
		Any    any                `json:"any"`
		Inner  Inner              `json:"inner"`
		Folded float64
		Int    int `json:"int"`
		Text   string
	}
	var s S
	in := `{"score":NaN,"ptr":Infinity,"small":-Infinity,"list":[1,NaN,3],"pair":[Infinity,2],"map":{"m":NaN},` +
		`"any":{"deep":[NaN,{"x":-Infinity}]},"inner":{"f":NaN},"deep":Infinity,"FOLDED":NaN,"int":7,"Text":"NaN E","big":1E5}`
	testutil.Success(t, Unmarshal([]byte(in), &s))
	same := func(name string, got, want float64) {
		t.Helper()
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	same("score", s.Score, nan)
	same("ptr", *s.Ptr, inf)
	same("small", float64(s.Small), math.Inf(-1))
	same("list[1]", s.List[1], nan)
	testutil.Equal(t, "list others", []float64{s.List[0], s.List[2]}, []float64{1, 3})
	same("pair[0]", s.Pair[0], inf)
	same("pair[1]", s.Pair[1], 2)
	same("map", s.Map["m"], nan)
	deep := s.Any.(map[string]any)["deep"].([]any)
	same("any deep[0]", deep[0].(float64), nan)
	same("any deep[1].x", deep[1].(map[string]any)["x"].(float64), math.Inf(-1))
	same("inner", *s.Inner.F, nan)
	same("embedded", s.Deep, inf)
	same("case-folded", s.Folded, nan)
	testutil.Equal(t, "others", []any{s.Int, s.Text}, []any{7, "NaN E"})

	var a any
	testutil.Success(t, Unmarshal([]byte(`[NaN]`), &a))
	same("top array", a.([]any)[0].(float64), nan)
	var f float64
	testutil.Success(t, Unmarshal([]byte(`-Infinity`), &f))
	same("top", f, math.Inf(-1))
	var big struct{ N float64 }
	testutil.Success(t, Unmarshal([]byte(`{"N":1E5,"x":NaN}`), &big))
	testutil.Equal(t, "a genuine E is a number", big.N, 1e5)

	var bad struct {
		N []int `json:"n"`
	}
	err := Unmarshal([]byte(`{"n":[1,NaN]}`), &bad)
	testutil.Error(t, err)
	testutil.Equal(t, "message", err.Error(), "neurosan: unmarshal: NaN at /n/1: cannot be stored in int")
	var str string
	testutil.Error(t, Unmarshal([]byte(`NaN`), &str))
	testutil.Error(t, Unmarshal([]byte(`{"a":Nope}`), &a))

	var plain map[string]int
	testutil.Success(t, Unmarshal([]byte(`{"a":1}`), &plain))
	testutil.Equal(t, "plain JSON", plain, map[string]int{"a": 1})
}

func Test_validJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{`{"a":NaN}`: true, `[Infinity,-Infinity]`: true, `{"a":1}`: true, `{"a":Nan}`: false, `{broken`: false, `NaN NaN`: false} {
		testutil.Equal(t, in, validJSON([]byte(in)), want)
	}
	// A raw value with NaN goes back to the server as it came.
	b, err := (&ChatRequest{ChatContext: json.RawMessage(`{"x": NaN}`)}).AppendJSON(nil)
	testutil.Success(t, err)
	testutil.Equal(t, "request", string(b), `{"chat_context":{"x": NaN}}`)
}

// Reads of any size on either side give what one pass over the whole
// text gives: the rewrite in the caller's buffer never overtakes the bytes
// it has yet to read.
func Test_nfReader_random(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	parts := []string{"NaN", "Infinity", "-Infinity", "Na", "Infin", "N", "I", `"`, `\`, `\"`, "E", "e", "1E5", `"NaN"`, "x", "{", "}", ",", " ", "0", "hhhhhhhhhhhhhhhh"}
	for range 300 {
		var b strings.Builder
		for range r.IntN(60) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		in := b.String()
		var s nfScanner
		want := string(s.flush(s.scan(nil, []byte(in), true)))
		src := &chunkReader{b: []byte(in), n: 1 + r.IntN(20)}
		nr := newNFReader(src)
		var got []byte
		for {
			p := make([]byte, 1+r.IntN(30))
			n, err := nr.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			testutil.Success(t, err)
		}
		testutil.Equal(t, in, string(got), want)
		testutil.Equal(t, "length kept", len(got), len(in))
	}
}
