package jsonstr

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// The bytes outside strings are kept; escaped quotes and backslashes do
// not end a string.
func TestTracker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, outside string }{
		{`{"a":1.5}`, `{:1.5}`},
		{`["x\"y",2]`, `[,2]`},
		{`["x\\",3]`, `[,3]`},
		{`"\\\"E"E`, `E`},
		{`[]`, `[]`},
	} {
		var tr Tracker
		var out []byte
		for _, c := range []byte(tc.in) {
			if tr.Outside(c) {
				out = append(out, c)
			}
		}
		testutil.Equal(t, tc.in, string(out), tc.outside)
	}
}
