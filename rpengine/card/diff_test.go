package card

import (
	"bytes"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, a, b, want string }{
		{"equal", `{"a":[1,{"b":2}]}`, `{ "a" : [1, {"b":2}] }`, `[]`},
		{"replace nested", `{"a":{"b":{"c":1,"d":2}},"z":0}`, `{"a":{"b":{"c":1,"d":3}},"z":0}`, `[{"op":"replace","path":"/a/b/d","value":3}]`},
		{"add member", `{"a":1,"c":3}`, `{"a":1,"b":{"x":[]},"c":3}`, `[{"op":"add","path":"/b","value":{"x":[]}}]`},
		{"remove member", `{"a":1,"b":2,"c":3}`, `{"a":1,"c":3}`, `[{"op":"remove","path":"/b"}]`},
		{"remove last member", `{"a":1,"b":2}`, `{"a":1}`, `[{"op":"remove","path":"/b"}]`},
		{"add last member", `{"a":1}`, `{"a":1,"b":2}`, `[{"op":"add","path":"/b","value":2}]`},
		{"insert in array", `{"a":[1,2,3,4]}`, `{"a":[1,2,9,3,4]}`, `[{"op":"add","path":"/a/2","value":9}]`},
		{"remove from array", `{"a":[1,2,3,4]}`, `{"a":[1,3,4]}`, `[{"op":"remove","path":"/a/1"}]`},
		{"append to array", `{"a":[1]}`, `{"a":[1,2]}`, `[{"op":"add","path":"/a/1","value":2}]`},
		{"empty array", `{"a":[1,2]}`, `{"a":[]}`, `[{"op":"remove","path":"/a/1"},{"op":"remove","path":"/a/0"}]`},
		{"element changed", `{"a":[{"x":1},{"x":2},{"x":3}]}`, `{"a":[{"x":1},{"x":5},{"x":3}]}`, `[{"op":"replace","path":"/a/1/x","value":5}]`},
		{"type change", `{"a":{"x":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"two distant fields", `{"a":1,"m":{"n":[1,2]},"z":1}`, `{"a":2,"m":{"n":[1,2]},"z":2}`, `[{"op":"replace","path":"/a","value":2},{"op":"replace","path":"/z","value":2}]`},
		{"escaped keys", `{"a/b":{"m~n":1},"é\"":1}`, `{"a/b":{"m~n":2},"é\"":2}`, `[{"op":"replace","path":"/a~1b/m~0n","value":2},{"op":"replace","path":"/é\"","value":2}]`},
		{"utf-16 key order", `{"😂":1,"דּ":1}`, `{"😂":2,"דּ":2}`, `[{"op":"replace","path":"/😂","value":2},{"op":"replace","path":"/דּ","value":2}]`},
		{"same suffix bytes", `{"a":"xy","b":"y"}`, `{"a":"x","b":"yy"}`, `[{"op":"replace","path":"/a","value":"x"},{"op":"replace","path":"/b","value":"yy"}]`},
		{"numbers normalized", `{"a":1.0}`, `{"a":1}`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			p, err := Diff(a, b)
			testutil.Success(t, err)
			testutil.Equal(t, "patch", string(p), tt.want)
		})
	}
	_, err := Diff(nil, mustParse(t, `{}`))
	testutil.Error(t, err) // not a panic
}

// FuzzDiff: for any two cards, Diff succeeds and its patch, applied by
// evanphx behind ApplyPatch, gives the target.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,3],"b":{"c":"d"}}`), []byte(`{"a":[1,3],"b":{"c":"e","f":null}}`))
	f.Add(readCard(f, "minimal.json"), readCard(f, "full.json"))
	f.Add(readCard(f, "broken-v3.json"), readCard(f, "cjk-emoji.json"))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, err := Parse(x)
		if err != nil {
			return
		}
		b, err := Parse(y)
		if err != nil {
			return
		}
		p, err := Diff(a, b)
		if err != nil {
			t.Fatalf("%s -> %s: %v", x, y, err)
		}
		out, err := ApplyPatch(x, p)
		if err != nil {
			t.Fatalf("%s + %s: %v", x, p, err)
		}
		want, _ := AppendCanonical(nil, y)
		if !bytes.Equal(out, want) {
			t.Fatalf("%s + %s = %s, want %s", x, p, out, want)
		}
	})
}
