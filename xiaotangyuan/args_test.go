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
		{"null", `null`, false},
		{"empty", ``, false},
		// Beyond the skill runtime's limits: the gateway sends such
		// arguments once earlier results are filled in. Issue #20.
		{"depth 40", nest(40), true},
		{"array 5000", list(5000), true},
		{"200 keys", keys(200), true},
		{"string 100000", `{"s":"` + strings.Repeat("汤", 100000) + `"}`, true},
		{"long key", `{"` + strings.Repeat("k", 501) + `":1}`, true},
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
// Harness) to the check: it must not panic, and what it accepts is
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
