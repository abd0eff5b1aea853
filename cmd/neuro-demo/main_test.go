package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
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

// binary builds the demo once (without -race, to keep it quick). The build
// is not bounded by any test's run deadline: on a loaded machine it alone
// may take tens of seconds.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "neuro-demo")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "neuro-demo")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// runTimeout bounds one run of the demo: generous, because these games
// take well under a second but a loaded machine (2 cores, many test
// binaries) can stretch that a hundredfold. It only stops a hung demo.
const runTimeout = 5 * time.Minute

// runBinary runs the built binary with env (NEURO_SDK_WS_URL removed
// unless given) and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, stdin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := binary(t) // before the run's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NEURO_SDK_WS_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("neuro-demo %v: still running after %v\n%s%s", args, runTimeout, out.String(), errb.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("neuro-demo %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// runDemo runs the built binary and returns its output; it must succeed.
func runDemo(t *testing.T, stdin string, env []string, args ...string) string {
	t.Helper()
	code, stdout, stderr := runBinary(t, stdin, env, args...)
	if code != 0 {
		t.Fatalf("neuro-demo %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	return stdout + stderr
}

// runInProcess calls run with env as the environment and returns its exit
// code, stdout and stderr.
func runInProcess(t *testing.T, ctx context.Context, stdin string, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb testutil.SyncBuffer
	code = run(ctx, args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
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

func TestDemo_fakeByDefault(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "--randy"} {
		args := []string{"--auto", "--games", "3", "--delay", "5ms", "--seed", "7"}
		if mode != "" {
			args = append(args, mode)
		}
		out := runDemo(t, "", nil, args...)
		mustContain(t, out, "Playing against the fake Neuro (seed 7)",
			`"command":"startup"`, `"command":"actions/register"`, `"name":"tictactoe_place_o"`,
			`"command":"actions/force"`, `"command":"action/result"`, "Neuro places O on")
		// With seed 7 the fake picks taken cells: the validator must refuse
		// them with an actionable message, the demo must say why, and she
		// retries.
		mustContain(t, out, `"success":false,"message":"cell `, "is taken; free cells: ")
		if !regexp.MustCompile(`Neuro's move was refused: cell \d is taken; free cells: [\d, ]+\. She tries again\.`).MatchString(out) {
			t.Errorf("%s: no explained refusal:\n%s", mode, out)
		}
		if n := strings.Count(out, "game over: "); n != 3 {
			t.Errorf("%s: %d games over, want 3:\n%s", mode, n, out)
		}
		if mode == "" {
			mustContain(t, out, "Connected to Neuro-sama.")
		}
		// Issue #19: Randy's reregister_all on connect is not answered
		// with a second registration.
		if n := strings.Count(out, `"command":"actions/register"`); n != 1 {
			t.Errorf("%s: %d registrations, want 1", mode, n)
		}
	}
}

func TestDemo_humanMovesFromStdin(t *testing.T) {
	t.Parallel()
	// Junk and taken cells are refused with a reason and asked again; the
	// game must still finish.
	out := runDemo(t, "x\n0\n5\n5\n1\n2\n3\n4\n6\n7\n8\n9\n", nil, "--fake", "--delay", "5ms", "--quiet")
	mustContain(t, out, `"x" is not a cell number; type one of 1, 2, 3, 4, 5, 6, 7, 8, 9.`,
		"there is no cell 0 (cells are 1 to 9)", "You place X on 5.", "cell 5 is taken; type one of", "game over: ")
	if strings.Contains(out, `"command"`) {
		t.Errorf("--quiet printed wire messages:\n%s", out)
	}
}

// TestDemo_realWebSocket runs the demo over a loopback WebSocket against
// the fake, selected by NEURO_SDK_WS_URL, and checks its traffic with the
// conformance checker.
func TestDemo_realWebSocket(t *testing.T) {
	t.Parallel()
	srv := neurotest.NewServer(&neurotest.Options{Delay: 5 * time.Millisecond, Seed: 3, Addr: "127.0.0.1:0"})
	defer srv.Close()
	url := srv.URL
	out := runDemo(t, "", []string{"NEURO_SDK_WS_URL=" + url}, "--auto", "--games", "2")
	mustContain(t, out, "Connecting to "+url, "Connected to Neuro-sama.", "game over: ")
	if n := strings.Count(out, "game over: "); n != 2 {
		t.Errorf("%d games over, want 2", n)
	}
	for _, f := range srv.Findings() {
		t.Errorf("conformance finding: %v", f)
	}
	testutil.Equal(t, "connects", srv.Connects(), 1)
	if len(srv.Results()) < 2 {
		t.Errorf("results %v", srv.Results())
	}
}

// TestDemo_exitStatus checks the command convention on the real binary:
// --help on stdout with 0, a mistake as one line on stderr with 2. Issue
// #18 item 5.
func TestDemo_exitStatus(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runBinary(t, "", nil, "--help")
	testutil.Equal(t, "--help exit", code, 0)
	mustContain(t, stdout, "Usage:", "-turn-timeout", "Exit status:")
	testutil.Equal(t, "--help stderr", stderr, "")

	code, stdout, stderr = runBinary(t, "", nil, "--bogus")
	testutil.Equal(t, "unknown flag exit", code, 2)
	testutil.Equal(t, "unknown flag stdout", stdout, "")
	testutil.Equal(t, "unknown flag stderr",
		stderr, "neuro-demo: unknown flag --bogus; run 'neuro-demo --help' for usage\n")
}

// TestRun_help: -h, -help and --help print the usage on stdout and exit 0.
// Issue #18 item 5.
func TestRun_help(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "-help", "--help"} {
		code, stdout, stderr := runInProcess(t, context.Background(), "", nil, arg)
		testutil.Equal(t, arg+" exit", code, exitOK)
		mustContain(t, stdout, "neuro-demo: play tic-tac-toe", "Usage:", "-games N", "NEURO_SDK_WS_URL")
		testutil.Equal(t, arg+" stderr", stderr, "")
	}
}

// TestRun_usageErrors: a mistake on the command line is one line on
// stderr, naming the flag and pointing at --help, with exit status 2 and
// no log timestamp. Issue #18 item 5.
func TestRun_usageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--bogus"}, nil, "unknown flag --bogus"},
		{[]string{"-games", "x"}, nil, `invalid value "x" for flag -games`},
		{[]string{"--url"}, nil, "flag needs a value: --url"},
		{[]string{"--games", "0"}, nil, "--games 0: want 1 or more"},
		{[]string{"--delay", "-1s"}, nil, "--delay -1s: want 0 or more"},
		{[]string{"--turn-timeout", "0s"}, nil, "--turn-timeout 0s: want a positive duration"},
		{[]string{"somefile"}, nil, `unexpected argument "somefile"`},
		{[]string{"--fake", "--url", "ws://localhost:8000"}, nil, "--fake and --url: pick one"},
		{[]string{"--randy"}, map[string]string{"NEURO_SDK_WS_URL": "ws://localhost:8000"}, "--randy is for the fake, but neuro-demo connects to ws://localhost:8000; drop --randy, or add --fake"},
		{[]string{"--url", ""}, nil, "--url is empty"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runInProcess(t, context.Background(), "", tt.env, tt.args...)
		testutil.Equal(t, strings.Join(tt.args, " ")+" exit", code, exitUsage)
		testutil.Equal(t, strings.Join(tt.args, " ")+" stdout", stdout, "")
		want := "neuro-demo: " + tt.want
		if !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "; run 'neuro-demo --help' for usage\n") ||
			strings.Count(stderr, "\n") != 1 || timestamp.MatchString(stderr) {
			t.Errorf("%v: stderr %q; want one line starting %q and pointing at --help", tt.args, stderr, want)
		}
	}
}

// TestRun_endOfInput: stdin running out ends the demo cleanly with 0.
// Issue #18 item 5. Issue #32: nothing follows the last line, not even a
// wire message the recorder still held.
func TestRun_endOfInput(t *testing.T) {
	t.Parallel()
	for _, stdin := range []string{"", "5\n"} {
		for _, quiet := range []string{"--quiet", "--quiet=false"} {
			code, stdout, stderr := runInProcess(t, context.Background(), stdin, nil, quiet, "--delay", "1ms")
			testutil.Equal(t, "exit", code, exitOK)
			if !strings.HasSuffix(stdout, "\nEnd of input: stopping here.\n") {
				t.Errorf("stdin %q, %s: stdout does not end with the end of input:\n%s", stdin, quiet, stdout)
			}
			testutil.Equal(t, "stderr", stderr, "")
		}
	}
}

// TestRun_serverDown: pointed at a server that is down, the demo says so,
// and what to do, at once instead of after --turn-timeout (ten minutes
// here: the test would hit its own deadline first). Issue #18 item 5.
func TestRun_serverDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	url := "ws://" + l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	code, stdout, stderr := runInProcess(t, ctx, "", map[string]string{"NEURO_SDK_WS_URL": url}, "--auto", "--turn-timeout", "10m")
	if ctx.Err() != nil {
		t.Fatal("the demo waited instead of reporting the server down")
	}
	testutil.Equal(t, "exit", code, exitFailed)
	mustContain(t, stdout, "Connecting to "+url)
	mustContain(t, stderr, "neuro-demo: cannot reach Neuro at "+url, "Start the Neuro server (or Randy) there", "--url", "built-in fake")
	if timestamp.MatchString(stderr) {
		t.Errorf("timestamped error:\n%s", stderr)
	}
}

// TestRun_interrupted: Ctrl-C (the context ends) exits 130 with one line.
func TestRun_interrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := runInProcess(t, ctx, "", nil, "--quiet")
	testutil.Equal(t, "exit", code, exitInterrupted)
	testutil.Equal(t, "stderr", stderr, "neuro-demo: interrupted\n")
}

// TestRun_survivesRestartedServer: the server is killed and started again
// at the same address mid-game (ids count from "0" again); the demo
// reconnects and finishes its games. Issue #19 item 1, as reproduced with
// Randy.
func TestRun_survivesRestartedServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []neurotest.Mode{neurotest.Strict, neurotest.Randy} {
		srv := neurotest.NewServer(&neurotest.Options{Mode: mode, Delay: 5 * time.Millisecond, Seed: 3, Addr: "127.0.0.1:0"})
		url := srv.URL
		w := &restartOnce{srv: srv, after: "Neuro places O on"}
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		var errb testutil.SyncBuffer
		code := run(ctx, []string{"--url", url, "--auto", "--games", "2", "--quiet", "--turn-timeout", "1m"},
			strings.NewReader(""), w, &errb, func(string) string { return "" })
		cancel()
		srv.Close()
		out := w.String()
		testutil.Equal(t, "exit", code, exitOK)
		if !w.restarted() {
			t.Fatalf("never restarted:\n%s", out)
		}
		mustContain(t, out, "Disconnected (")
		if n := strings.Count(out, "game over: "); n != 2 {
			t.Errorf("mode %d: %d games over, want 2:\n%s\n%s", mode, n, out, errb.String())
		}
	}
}

// restartOnce records output and restarts the server the first time the
// output contains after.
type restartOnce struct {
	testutil.SyncBuffer
	srv   *neurotest.Server
	after string
	once  sync.Once
	done  bool
	mu    sync.Mutex
}

func (r *restartOnce) Write(p []byte) (int, error) {
	n, err := r.SyncBuffer.Write(p)
	if strings.Contains(r.SyncBuffer.String(), r.after) {
		r.once.Do(func() {
			r.srv.Restart()
			r.mu.Lock()
			r.done = true
			r.mu.Unlock()
		})
	}
	return n, err
}

func (r *restartOnce) restarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}
