package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #18 (item 5): a mistake names the flag as it was typed.
func TestFlagMistake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown, two dashes", []string{"--colour"}, "unknown flag --colour"},
		{"unknown, one dash", []string{"-x"}, "unknown flag -x"},
		{"unknown, with a value", []string{"--x=1"}, "unknown flag --x"},
		{"missing value", []string{"--n"}, "flag needs a value: --n"},
		{"missing value, one dash", []string{"-n"}, "flag needs a value: -n"},
		{"invalid value", []string{"--n", "many"}, `invalid value "many" for flag --n: parse error`},
		{"invalid value after =", []string{"-n=x"}, `invalid value "x" for flag -n: parse error`},
		{"bad boolean", []string{"--b=maybe"}, `invalid value "maybe" for flag --b: parse error`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Int("n", 0, "")
			fs.Bool("b", false, "")
			err := fs.Parse(tc.args)
			if err == nil {
				t.Fatal("no error")
			}
			testutil.Equal(t, "mistake", FlagMistake(err, tc.args), tc.want)
		})
	}
}

func TestFlagMistake_otherError(t *testing.T) {
	t.Parallel()
	testutil.Equal(t, "mistake", FlagMistake(errors.New("want key=value"), nil), "want key=value")
}

func TestUsage(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	Usage(&b, "cmd", "unknown flag --x")
	testutil.Equal(t, "line", b.String(), "cmd: unknown flag --x; run 'cmd --help' for usage\n")
}
