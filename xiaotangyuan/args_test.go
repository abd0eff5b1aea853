package xiaotangyuan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func Test_checkArgs(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat(`}`, n-1) }
	list := func(n int) string { return `{"l":[` + strings.TrimSuffix(strings.Repeat(`1,`, n), ",") + `]}` }
	keys := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"k` + strings.Repeat("x", i) + `":[1,{"y":2}]`)
		}
		return b.String() + "}"
	}
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"empty object", `{}`, true},
		{"butterfly", `{"targetId":"$target.targetId","x":1.5,"z":-3,"radius":4}`, true},
		{"not object", `[1]`, false},
		{"depth 8 below the arguments", nest(9), true},
		{"depth 9 below the arguments", nest(10), false},
		{"array 50", list(50), true},
		{"array 51", list(51), false},
		{"50 keys with nested values", keys(50), true},
		{"51 keys", keys(51), false},
		{"string 500", `{"s":"` + strings.Repeat("汤", 500) + `"}`, true},
		{"string 501", `{"s":"` + strings.Repeat("a", 501) + `"}`, false},
		{"long key", `{"` + strings.Repeat("k", 501) + `":1}`, false},
		{"broken", `{"a":`, false},
		{"trailing value", `{}0`, false},
		{"two objects", `{"a":1} {"b":2}`, false},
		{"trailing space", "{\"a\":1} \n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkArgs([]byte(tc.in))
			if tc.ok {
				testutil.Success(t, err)
			} else {
				testutil.Error(t, err)
			}
		})
	}
}

// FuzzCheckArgs feeds arbitrary atom arguments (they come from the
// Harness) to the limit check: it must not panic, and what it accepts is
// a valid JSON object.
func FuzzCheckArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c"}]}`, `{"a":`, `[1]`, `{"a":1}}`, `{"a":[}`, `  {"x":null} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkArgs(b) != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", b, err)
		}
	})
}
