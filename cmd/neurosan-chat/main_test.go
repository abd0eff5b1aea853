package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"go.uber.org/goleak"
)

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
	buildOut  []byte
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
		os.Exit(code)
	}))
}

// build compiles the command once, without -race, so the test runs the real
// binary as a user would.
func build(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found; cannot build the binary")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "neurosan-chat")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "neurosan-chat")
		buildOut, buildErr = exec.Command(goBin, "build", "-o", binPath, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// runBinary runs the built binary and returns its exit code, stdout and
// stderr.
func runBinary(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// runInProcess calls run and returns its exit code, stdout and stderr.
func runInProcess(t *testing.T, ctx context.Context, stdin io.Reader, interrupts chan os.Signal, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb testutil.SyncBuffer
	code = run(ctx, args, stdin, &out, &errb, interrupts)
	return code, out.String(), errb.String()
}

func mustContain(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// timestamp matches the prefix of the standard logger's lines.
var timestamp = regexp.MustCompile(`\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`)

func TestRun_fakeConversation(t *testing.T) {
	t.Parallel()
	code, out, stderr := runInProcess(t, context.Background(), strings.NewReader("cats\ndogs\n/reset\nowls\n/quit\n"), nil,
		"--fake", "--fake-delay", "0", "--agent", "games/quest_designer")
	testutil.Equal(t, "exit", code, exitOK)
	testutil.Equal(t, "stderr", stderr, "")
	mustContain(t, out,
		"chatting with games/quest_designer: Designs side quests",
		`agent> Quest 1: about "cats"`,
		`agent> Quest 2: about "dogs"`, // the conversation continued
		"(new conversation)",
		`agent> Quest 1: about "owls"`)
	if strings.Contains(out, "lore_keeper") {
		t.Errorf("intermediate messages shown without --verbose:\n%s", out)
	}
}

func TestBinary_verbose(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "log.jsonl")
	code, out, stderr := runBinary(t, "times\n", "--fake", "--fake-delay", "0", "--verbose", "--agent", "math_guy", "--sly", "x=6", "--sly", "y=7", "--record", rec)
	testutil.Equal(t, "exit", code, 0)
	testutil.Equal(t, "stderr", stderr, "")
	mustContain(t, out,
		"[math_guy AI] Calling the calculator with x * y.",
		"[math_guy/calculator] progress 50%",
		"[math_guy/calculator AGENT_TOOL_RESULT] 42",
		"agent> 6 * 7 = 42",
		`sly_data: {"equals":42}`)
	log, err := os.ReadFile(rec)
	testutil.Success(t, err)
	if !strings.Contains(string(log), `"dir":"out"`) || !strings.Contains(string(log), `"AGENT_FRAMEWORK"`) {
		t.Errorf("record file lacks the exchange:\n%s", log)
	}
	fi, err := os.Stat(rec)
	testutil.Success(t, err)
	testutil.Equal(t, "the record holds sly_data: private", fi.Mode().Perm(), os.FileMode(0o600))
}

func TestRun_listsAgents(t *testing.T) {
	t.Parallel()
	code, out, _ := runInProcess(t, context.Background(), strings.NewReader(""), nil, "--fake", "--fake-delay", "0")
	testutil.Equal(t, "exit", code, exitOK)
	mustContain(t, out, "available: games/quest_designer", "chatting with math_guy")
}

// --help on stdout with 0, a mistake as one line on stderr with 2, on the
// real binary. Issue #18 item 5.
func TestBinary_exitStatus(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runBinary(t, "", "--help")
	testutil.Equal(t, "--help exit", code, 0)
	mustContain(t, stdout, "Usage:", "-turn-timeout", "Exit status:")
	testutil.Equal(t, "--help stderr", stderr, "")

	code, stdout, stderr = runBinary(t, "", "--bogus")
	testutil.Equal(t, "unknown flag exit", code, 2)
	testutil.Equal(t, "unknown flag stdout", stdout, "")
	testutil.Equal(t, "unknown flag stderr", stderr,
		"neurosan-chat: unknown flag --bogus; run 'neurosan-chat --help' for usage\n")
}

// -h, -help and --help print the usage on stdout and exit 0. Issue #18
// item 5.
func TestRun_help(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "-help", "--help"} {
		code, stdout, stderr := runInProcess(t, context.Background(), strings.NewReader(""), nil, arg)
		testutil.Equal(t, arg+" exit", code, exitOK)
		mustContain(t, stdout, "neurosan-chat: chat with a NeuroSan agent network", "Usage:", "-agent NAME", "/reset", "Exit status:")
		testutil.Equal(t, arg+" stderr", stderr, "")
	}
}

// A mistake on the command line is one line on stderr, naming the flag and
// pointing at --help, with exit status 2 and no log timestamp. Issue #18
// item 5.
func TestRun_usageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"--turn-timeout", "soon"}, `invalid value "soon" for flag --turn-timeout`},
		{[]string{"--url"}, "flag needs a value: --url"},
		{[]string{"--sly", "x"}, `invalid value "x" for flag --sly: want key=value`},
		{[]string{"--turn-timeout", "-1s"}, "--turn-timeout -1s: want 0 (none) or a positive duration"},
		{[]string{"--fake", "--fake-delay", "-1s"}, "--fake-delay -1s: want 0 or more"},
		{[]string{"--fake-delay", "1s"}, "--fake-delay is for the fake: add --fake, or drop --fake-delay"},
		{[]string{"hello"}, `unexpected argument "hello" (a turn is typed at the prompt`},
		{[]string{"--fake", "--url", "http://localhost:8080"}, "--fake and --url: pick one"},
		{[]string{"--agent", ""}, "--agent is empty"},
		{[]string{"--url", "localhost:8080"}, `--url "localhost:8080": want http:// or https:// and a host`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runInProcess(t, context.Background(), strings.NewReader(""), nil, tt.args...)
		name := strings.Join(tt.args, " ")
		testutil.Equal(t, name+" exit", code, exitUsage)
		testutil.Equal(t, name+" stdout", stdout, "")
		want := "neurosan-chat: " + tt.want
		if !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "; run 'neurosan-chat --help' for usage\n") ||
			strings.Count(stderr, "\n") != 1 || timestamp.MatchString(stderr) {
			t.Errorf("%v: stderr %q; want one line starting %q and pointing at --help", tt.args, stderr, want)
		}
	}
}

// End of input ends the chat cleanly with 0, at the prompt or after
// turns. Issue #18 item 5.
func TestRun_endOfInput(t *testing.T) {
	t.Parallel()
	for _, stdin := range []string{"", "cats\n", "cats"} {
		code, stdout, stderr := runInProcess(t, context.Background(), strings.NewReader(stdin), nil, "--fake", "--fake-delay", "0")
		testutil.Equal(t, "exit", code, exitOK)
		testutil.Equal(t, "stderr", stderr, "")
		testutil.Equal(t, "ends with a newline after the prompt", strings.HasSuffix(stdout, "you> \n"), true)
	}
}

// Errors say what to do next, without a timestamp: a server that is down,
// an unknown agent, a record file that cannot be written. Issue #18 item 5.
func TestRun_errorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--url", "http://127.0.0.1:1"}, exitFailed, []string{"neurosan-chat: cannot reach NeuroSan at http://127.0.0.1:1", "start the server there", "--url", "--fake"}},
		{[]string{"--fake", "--agent", "nobody"}, exitFailed, []string{`neurosan-chat: no agent network "nobody" on http://127.0.0.1:`, "run without --agent to list them"}},
		// Issue #32: exit 2, as every command for a file a flag names.
		{[]string{"--fake", "--record", filepath.Join(t.TempDir(), "no", "such", "dir", "log")}, exitUsage, []string{"neurosan-chat: --record: ", "give a path in a writable folder"}},
	}
	for _, tt := range tests {
		code, _, stderr := runInProcess(t, context.Background(), strings.NewReader(""), nil, tt.args...)
		testutil.Equal(t, strings.Join(tt.args, " ")+" exit", code, tt.code)
		mustContain(t, stderr, tt.want...)
		if strings.Count(stderr, "\n") != 1 || timestamp.MatchString(stderr) {
			t.Errorf("%v: want one line without a timestamp: %q", tt.args, stderr)
		}
	}
}

// A failed turn is one line on stderr that says what to do, and the chat
// goes on.
func TestRun_turnError(t *testing.T) {
	t.Parallel()
	// With an hour's pause after each line, a MAXIMAL turn is stuck after
	// its first step until --turn-timeout.
	code, stdout, stderr := runInProcess(t, context.Background(), strings.NewReader("times\n"), nil,
		"--fake", "--fake-delay", "1h", "--verbose", "--agent", "math_guy", "--sly", "x=6", "--sly", "y=7", "--turn-timeout", "300ms")
	testutil.Equal(t, "exit", code, exitOK)
	mustContain(t, stdout, "[math_guy AI] Calling the calculator")
	mustContain(t, stderr, "neurosan-chat: ", "turn timeout", "raise it, or set 0 for none")
	if strings.Count(stderr, "\n") != 1 || timestamp.MatchString(stderr) {
		t.Errorf("want one line without a timestamp: %q", stderr)
	}
}

// Ctrl-C at the prompt (or the context ending) exits 130 with one line.
func TestRun_interrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stdin, w := io.Pipe() // the user types nothing
	defer w.Close()
	code, _, stderr := runInProcess(t, ctx, stdin, nil, "--fake", "--fake-delay", "0")
	testutil.Equal(t, "exit", code, exitInterrupted)
	testutil.Equal(t, "stderr", stderr, "neurosan-chat: interrupted\n")

	interrupts := make(chan os.Signal, 1)
	interrupts <- os.Interrupt
	stdin2, w2 := io.Pipe()
	defer w2.Close()
	code, _, stderr = runInProcess(t, context.Background(), stdin2, interrupts, "--fake", "--fake-delay", "0")
	testutil.Equal(t, "exit", code, exitInterrupted)
	testutil.Equal(t, "stderr", stderr, "neurosan-chat: interrupted\n")
}

// Ctrl-C during a turn abandons that turn only; the chat goes on.
func TestRun_interruptAbandonsTurn(t *testing.T) {
	t.Parallel()
	stdin, w := io.Pipe()
	interrupts := make(chan os.Signal, 1)
	var out, errb testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"--fake", "--fake-delay", "1h", "--verbose", "--agent", "games/quest_designer"}, stdin, &out, &errb, interrupts)
	}()
	io.WriteString(w, "cats\n")
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("output lacks %q:\n%s", want, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("lore_keeper AGENT]") // stuck in the hour's pause after it
	interrupts <- os.Interrupt
	waitFor("(turn abandoned")
	w.Close()
	testutil.Equal(t, "exit", <-done, exitOK)
	if strings.Contains(out.String(), "agent> ") {
		t.Errorf("the abandoned turn still answered:\n%s", out.String())
	}
	testutil.Equal(t, "stderr", errb.String(), "")
}

// The same with a real SIGINT on the real binary.
func TestBinary_interruptAbandonsTurn(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(build(t), "--fake", "--fake-delay", "1h", "--verbose", "--agent", "games/quest_designer")
	stdin, err := cmd.StdinPipe()
	testutil.Success(t, err)
	stdout, err := cmd.StdoutPipe()
	testutil.Success(t, err)
	testutil.Success(t, cmd.Start())
	defer cmd.Process.Kill()
	io.WriteString(stdin, "cats\n")
	sc := bufio.NewScanner(stdout)
	var out strings.Builder
	waitFor := func(want string) {
		t.Helper()
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), want) {
				return
			}
		}
		t.Fatalf("output ended without %q:\n%s", want, out.String())
	}
	waitFor("lore_keeper AGENT]")
	testutil.Success(t, cmd.Process.Signal(os.Interrupt))
	waitFor("(turn abandoned")
	stdin.Close()
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "agent> ") {
		t.Errorf("the abandoned turn still answered:\n%s", out.String())
	}
}
