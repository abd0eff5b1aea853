package neurosantest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// The want column is what CPython 3.11 prints for
// json.dumps(json.loads(in)).
var pyCases = []struct{ in, want string }{
	{`{"a":1,"b":[1,2.5,"x"],"c":{}}`, `{"a": 1, "b": [1, 2.5, "x"], "c": {}}`},
	{`[]`, `[]`},
	{`{"k":"café ☕ 😀 </b> \/ \" \n\u0001\u007f"}`, `{"k": "caf\u00e9 \u2615 \ud83d\ude00 </b> / \" \n\u0001\u007f"}`},
	{`1.0e2`, `100.0`},
	{`1e16`, `1e+16`},
	{`1e15`, `1000000000000000.0`},
	{`0.0001`, `0.0001`},
	{`1e-5`, `1e-05`},
	{`-0.0`, `-0.0`},
	{`-0`, `0`},
	{`12345678901234567890`, `12345678901234567890`},
	{`NaN`, `NaN`},
	{`[Infinity,-Infinity]`, `[Infinity, -Infinity]`},
	{`1E400`, `Infinity`},
	{`0.1`, `0.1`},
	{`123456789.123456789`, `123456789.12345679`},
	{`{"a":1,"a":2,"b":3}`, `{"a": 2, "b": 3}`},
	{`5e-324`, `5e-324`},
	{`1.7976931348623157e308`, `1.7976931348623157e+308`},
	{`2.5E-3`, `0.0025`},
	{`100`, `100`},
	{`-1.5e-7`, `-1.5e-07`},
	{" {\t\"a\" :\n[ true , false , null ] } ", `{"a": [true, false, null]}`},
}

func Test_appendPy(t *testing.T) {
	t.Parallel()
	for _, tc := range pyCases {
		got, err := appendPy(nil, []byte(tc.in))
		testutil.Success(t, err)
		testutil.Equal(t, tc.in, string(got), tc.want)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `-`, `nan`, `"\x01"`, `1 2`, `{"a":1,}`, `tru`} {
		if _, err := appendPy(nil, []byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// randomJSON writes a random document with the values that trip encoders:
// non-ASCII and control characters, floats at the notation boundaries,
// big integers, non-finite floats, nesting and repeated keys.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	strs := []string{"", "a", "café", "😀", "</x>", `q"\`, "\u007f\u0001\n\t", "日本", "\u2028"}
	switch k := r.IntN(9); {
	case depth > 3 || k < 3:
		switch r.IntN(6) {
		case 0:
			f := r.NormFloat64() * []float64{1e-8, 1e-4, 1, 1e15, 1e16, 1e300}[r.IntN(6)]
			b.WriteString(strconv.FormatFloat(f, []byte("eEgf")[r.IntN(4)], -1, 64))
		case 1:
			fmt.Fprint(b, r.Int64()-r.Int64())
		case 2:
			b.WriteString([]string{"NaN", "Infinity", "-Infinity", "true", "null", "1.0", "-0.0"}[r.IntN(7)])
		default:
			s, _ := json.Marshal(strs[r.IntN(len(strs))])
			b.Write(s)
		}
	case k < 6:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(strs[r.IntN(len(strs))])
			b.Write(k)
			b.WriteByte(':')
			randomJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	}
}

// A differential test against CPython's own json module, when python3 is
// installed: the fake's bytes must be the real server's.
func Test_appendPy_python(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the differential test against json.dumps needs it (the table test still runs)")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var docs []string
	for range 500 {
		var b strings.Builder
		randomJSON(r, &b, 0)
		docs = append(docs, b.String())
	}
	for _, tc := range pyCases {
		docs = append(docs, strings.TrimSpace(strings.ReplaceAll(tc.in, "\n", " ")))
	}
	cmd := exec.Command(py, "-c", "import json,sys\nfor l in sys.stdin: print(json.dumps(json.loads(l)))")
	cmd.Stdin = strings.NewReader(strings.Join(docs, "\n") + "\n")
	out, err := cmd.Output()
	testutil.Success(t, err)
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	testutil.Equal(t, "lines", len(want), len(docs))
	for i, d := range docs {
		got, err := appendPy(nil, []byte(d))
		testutil.Success(t, err)
		if !bytes.Equal(got, []byte(want[i])) {
			t.Errorf("%s:\n got %s\nwant %s", d, got, want[i])
		}
	}
}
