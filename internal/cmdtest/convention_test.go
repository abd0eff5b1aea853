package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// command is one of the five commands, with the arguments that make it run
// offline reading standard input (nil: it reads stdin only for "-" files,
// so the end-of-input case does not apply).
type command struct {
	name    string
	offline []string
}

var commands = []command{
	{"neuro-demo", []string{"--fake"}},
	{"xiaotangyuan-chat", []string{"--fake"}},
	{"neurosan-chat", []string{"--fake"}},
	{"rpengine-demo", []string{"--engine", "sim"}},
	{"rpcard", nil},
}

var (
	buildOnce sync.Once
	bin       string // the folder the commands are built into, once for every test
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bin != "" {
		os.RemoveAll(bin)
	}
	os.Exit(code)
}

// build builds the five commands once. It runs inside the tests, not in
// TestMain, so that go test sees the sources statSources looks at.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { bin, buildErr = buildCommands() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

func buildCommands() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is needed to build the commands: %w", err)
	}
	dir, err := os.MkdirTemp("", "cmdtest")
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if testutil.RaceEnabled {
		args = append(args, "-race") // the packages are then already built by their own tests
	}
	var pkgs []string
	for _, c := range commands {
		pkgs = append(pkgs, "github.com/gamelink-go/gamelink/cmd/"+c.name)
	}
	if out, err := exec.Command(goBin, append(args, pkgs...)...).CombinedOutput(); err != nil {
		return dir, fmt.Errorf("building the commands: %v\n%s", err, out)
	}
	return dir, statSources(goBin, pkgs)
}

// statSources looks at every source file the commands are built from. The
// binaries are built by another process, so without this go test would
// replay a cached result after any of them changed: it re-runs a test only
// when the files the test itself looked at change.
func statSources(goBin string, pkgs []string) error {
	const format = `{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`
	out, err := exec.Command(goBin, append([]string{"list", "-deps", "-f", format}, pkgs...)...).Output()
	if err != nil {
		return fmt.Errorf("listing the commands' sources: %w", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.Stat(f); err != nil {
			return err
		}
	}
	return nil
}

// timestamp matches a clock time or a date, as a log prefix writes them.
var timestamp = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}\b|\b\d{4}[-/]\d{2}[-/]\d{2}\b|\btime=`)

type result struct {
	stdout, stderr string
	code           int
}

// runCmd runs a built command with stdin at end of input and an
// environment that names no peer, so every command stays offline.
func runCmd(t *testing.T, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(build(t), name), args...)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "NEURO_SDK_WS_URL" && k != "RPENGINE_DEMO_DEBUG" {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func noTimestamp(t *testing.T, what, text string) {
	t.Helper()
	for line := range strings.Lines(text) {
		if timestamp.MatchString(line) {
			t.Errorf("%s has a timestamped line: %q", what, line)
		}
	}
}

// Issue #18 (item 5): --help and -h print the usage on stdout and exit 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		for _, flag := range []string{"--help", "-h"} {
			t.Run(c.name+flag, func(t *testing.T) {
				t.Parallel()
				r := runCmd(t, c.name, flag)
				testutil.Equal(t, "exit status", r.code, 0)
				testutil.Equal(t, "stderr", r.stderr, "")
				if !strings.Contains(strings.ToLower(r.stdout), "usage") || !strings.Contains(r.stdout, c.name) {
					t.Errorf("stdout is not the usage of %s:\n%s", c.name, r.stdout)
				}
				noTimestamp(t, "the usage", r.stdout)
				// Issue #32 (item 11): --name in every usage, and one wording
				// of the usage exit status.
				for line := range strings.Lines(r.stdout) {
					if m := oneDash.FindString(line); m != "" {
						t.Errorf("the usage shows %q with one dash: %q", strings.TrimSpace(m), line)
					}
				}
				if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "2 usage error") {
					t.Errorf("the usage does not say \"2 usage error\":\n%s", r.stdout)
				}
			})
		}
	}
}

// Issue #18 (item 5): an unknown flag exits 2 with one line on stderr that
// names the flag as it was typed and says where the usage is; nothing on
// stdout.
func TestUnknownFlag(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		for _, flag := range []string{"--no-such-flag", "-x", "--x=1"} {
			t.Run(c.name+flag, func(t *testing.T) {
				t.Parallel()
				r := runCmd(t, c.name, flag)
				testutil.Equal(t, "exit status", r.code, 2)
				testutil.Equal(t, "stdout", r.stdout, "")
				lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
				if len(lines) != 1 {
					t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), r.stderr)
				}
				line := lines[0]
				if !strings.HasPrefix(line, c.name+": ") {
					t.Errorf("stderr %q does not start with %q", line, c.name+": ")
				}
				typed, _, _ := strings.Cut(flag, "=")
				if !namesFlag(line, typed) {
					t.Errorf("stderr %q does not name the flag %s as typed", line, typed)
				}
				if want := "run '" + c.name + " --help' for usage"; !strings.Contains(line, want) {
					t.Errorf("stderr %q does not say %q", line, want)
				}
				noTimestamp(t, "stderr", r.stderr)
			})
		}
	}
}

// oneDash matches a flag of more than one letter written with one dash.
var oneDash = regexp.MustCompile(`(^|[\s\[(])-[a-zA-Z][a-zA-Z0-9-]+`)

// Issue #32 (item 11): a file a flag names that cannot be written, or
// read as what the flag takes, exits 2 with a line naming the flag, and
// nothing on stdout. Issue #36: so does an --inspect address that is not
// loopback.
func TestFileFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unwritable := filepath.Join(dir, "no", "such", "folder", "file")
	notWAV := filepath.Join(dir, "speech.mp3")
	if err := os.WriteFile(notWAV, []byte("ID3\x04\x00 not a WAV file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, flag string
		args       []string
		say        string // the line says this too
	}{
		{"rpengine-demo", "--record", []string{"--engine", "sim", "--record", unwritable}, ""},
		{"xiaotangyuan-chat", "--record", []string{"--fake", "--record", unwritable}, ""},
		{"neurosan-chat", "--record", []string{"--fake", "--record", unwritable}, ""},
		{"rpcard", "-o", []string{"fix", "../../testdata/cards/v1.json", "-o", unwritable}, ""},
		{"rpengine-demo", "--out", []string{"--engine", "sim", "--say", "hi", "--out", unwritable}, ""},
		{"rpengine-demo", "--wav", []string{"--engine", "sim", "--wav", notWAV}, "give a WAV file"},
		{"rpengine-demo", "--inspect", []string{"--engine", "sim", "--inspect", "0.0.0.0:0"}, "not a loopback address"},
		{"rpengine-demo", "--inspect", []string{"--engine", "sim", "--mailbox", filepath.Join(dir, "mailbox"), "--inspect", ":6060"}, "not a loopback address"},
	} {
		t.Run(tc.name+tc.flag, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, tc.name, tc.args...)
			testutil.Equal(t, "exit status", r.code, 2)
			testutil.Equal(t, "stdout", r.stdout, "")
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, tc.name+": ") || !namesFlag(last, tc.flag) || !strings.Contains(last, tc.say) {
				t.Errorf("the last line of stderr does not name %s (and say %q): %q", tc.flag, tc.say, last)
			}
			noTimestamp(t, "stderr", r.stderr)
		})
	}
}

// namesFlag reports whether flag appears in line as a word of its own.
func namesFlag(line, flag string) bool {
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" ;:,()'\"", r) }) {
		if w == flag {
			return true
		}
	}
	return false
}

// Issue #18 (item 5): the end of standard input ends an interactive
// command cleanly, with exit status 0 and no timestamped line.
func TestEndOfInput(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		if c.offline == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, c.name, c.offline...)
			if r.code != 0 {
				t.Fatalf("exit status %d at end of input, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			noTimestamp(t, "stderr", r.stderr)
			noTimestamp(t, "stdout", r.stdout)
		})
	}
}
