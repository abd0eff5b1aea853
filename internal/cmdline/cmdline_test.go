package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"testing"
	"time"

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

// Parse returns the flags set, flag.ErrHelp after the usage, or the
// mistake worded by FlagMistake; the flag set itself writes nothing.
func TestParse(t *testing.T) {
	t.Parallel()
	newSet := func() *flag.FlagSet {
		fs := NewFlagSet("cmd")
		fs.Int("n", 0, "a `COUNT`")
		fs.Bool("b", false, "")
		return fs
	}
	set, err := Parse(newSet(), []string{"--n=2", "rest"}, nil)
	testutil.Success(t, err)
	testutil.Equal(t, "set", set, map[string]bool{"n": true})

	helped := 0
	_, err = Parse(newSet(), []string{"--help"}, func() { helped++ })
	testutil.ErrorIs(t, err, flag.ErrHelp)
	testutil.Equal(t, "help called", helped, 1)
	_, err = Parse(newSet(), []string{"-h"}, nil)
	testutil.ErrorIs(t, err, flag.ErrHelp)

	_, err = Parse(newSet(), []string{"--colour"}, func() { helped++ })
	testutil.Equal(t, "mistake", err.Error(), "unknown flag --colour")
	testutil.Equal(t, "help not called", helped, 1)

	var b bytes.Buffer
	fs := newSet()
	WriteUsage(&b, fs, "intro\n", "outro\n")
	const usage = "intro\n  -n COUNT\n        a COUNT\noutro\n" // -b has no usage text: hidden
	testutil.Equal(t, "usage", b.String(), usage)
	_, err = Parse(fs, []string{"--nope"}, nil)
	testutil.Equal(t, "mistake after usage", err.Error(), "unknown flag --nope") // and nothing more on b
	testutil.Equal(t, "nothing written by the flag set", b.String(), usage)
}

// Issue #32 (item 11): every command shows a flag as --name, wrapped, with
// its default.
func TestPrintFlag(t *testing.T) {
	t.Parallel()
	fs := NewFlagSet("cmd")
	fs.String("record", "", "write every message in and out to `FILE` as JSON Lines, for the bug reports that players send us")
	fs.Duration("wait", 2*time.Minute, "how long to wait")
	fs.Bool("v", false, "debug logs")
	var b bytes.Buffer
	fs.VisitAll(func(f *flag.Flag) { PrintFlag(&b, f) })
	testutil.Equal(t, "flags", b.String(), `  --record FILE
        write every message in and out to FILE as JSON Lines, for the bug
        reports that players send us
  -v
        debug logs
  --wait duration
        how long to wait (default 2m0s)
`)
}
