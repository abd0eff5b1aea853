package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// demoBin is the demo built once for every test: the tests run the real
// binary, as a script or a player would.
var demoBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rpengine-demo-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoBin = filepath.Join(dir, "rpengine-demo")
	args := []string{"build", "-o", demoBin}
	if testutil.RaceEnabled {
		args = append(args, "-race") // a race in the demo fails its run (exit 66)
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the demo: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// demo is one running demo process.
type demo struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *os.File // nil: stdin is /dev/null
	stdout testutil.SyncBuffer
	stderr testutil.SyncBuffer
	done   chan struct{}
	err    error
}

// testTimeout bounds every wait; tests finish long before it.
const testTimeout = 30 * time.Second

// startDemo runs the binary with args; with pipeIn its stdin is a pipe
// the test writes to (writeLine, closeStdin).
func startDemo(t *testing.T, pipeIn bool, args ...string) *demo {
	t.Helper()
	d := &demo{t: t, cmd: exec.Command(demoBin, args...), done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = &d.stdout, &d.stderr
	if pipeIn {
		r, w, err := os.Pipe()
		testutil.Success(t, err)
		d.cmd.Stdin, d.stdin = r, w
		t.Cleanup(func() { r.Close(); w.Close() })
	}
	testutil.Success(t, d.cmd.Start())
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("demo %q\nstdout:\n%s\nstderr:\n%s", args, d.stdout.String(), d.stderr.String())
		}
	})
	return d
}

// exitCode waits for the process and returns its exit code.
func (d *demo) exitCode() int {
	d.t.Helper()
	select {
	case <-d.done:
	case <-time.After(testTimeout):
		d.t.Fatalf("the demo did not exit within %v", testTimeout)
	}
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		return ee.ExitCode()
	}
	testutil.Success(d.t, d.err)
	return 0
}

// waitStderr waits until stderr contains sub and returns stderr.
func (d *demo) waitStderr(sub string) string {
	d.t.Helper()
	return d.waitFor(&d.stderr, func(s string) bool { return strings.Contains(s, sub) }, sub)
}

// waitStdout waits until stdout holds n lines.
func (d *demo) waitStdoutLines(n int) string {
	d.t.Helper()
	return d.waitFor(&d.stdout, func(s string) bool { return strings.Count(s, "\n") >= n }, fmt.Sprintf("%d stdout lines", n))
}

func (d *demo) waitFor(b *testutil.SyncBuffer, ok func(string) bool, what string) string {
	d.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		s := b.String()
		if ok(s) {
			return s
		}
		select {
		case <-d.done:
			if s := b.String(); ok(s) {
				return s
			}
			d.t.Fatalf("the demo exited (%v) before %s", d.err, what)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no %s within %v", what, testTimeout)
		}
	}
}

func (d *demo) writeLine(s string) {
	d.t.Helper()
	_, err := d.stdin.WriteString(s + "\n")
	testutil.Success(d.t, err)
}

func (d *demo) closeStdin() { d.stdin.Close() }

func (d *demo) interrupt() {
	d.t.Helper()
	testutil.Success(d.t, d.cmd.Process.Signal(syscall.SIGINT))
}

var portRE = regexp.MustCompile(`listening on ws://127\.0\.0\.1:(\d+)/rp-engine/socket`)

// port returns the port the demo printed.
func (d *demo) port() int {
	d.t.Helper()
	s := d.waitStderr("listening on ")
	m := portRE.FindStringSubmatch(s)
	if m == nil {
		d.t.Fatalf("no port in stderr:\n%s", s)
	}
	p, err := strconv.Atoi(m[1])
	testutil.Success(d.t, err)
	return p
}

// runDemo runs the binary to completion with stdin at EOF.
func runDemo(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	d := startDemo(t, false, args...)
	code = d.exitCode()
	return d.stdout.String(), d.stderr.String(), code
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}
