//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// openPTY opens a pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// ttyDemo is the demo running on a pseudo-terminal (stdin and stdout),
// as a player runs it; stderr is a pipe.
type ttyDemo struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	screen testutil.SyncBuffer // everything the demo wrote to the terminal
	stderr testutil.SyncBuffer
	done   chan error
}

func startTTY(t *testing.T, args ...string) *ttyDemo {
	t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	d := &ttyDemo{t: t, master: master, done: make(chan error, 1)}
	t.Cleanup(func() { master.Close() })
	d.cmd = exec.Command(demoBin, args...)
	d.cmd.Stdin, d.cmd.Stdout = slave, slave
	d.cmd.Stderr = &d.stderr
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	testutil.Success(t, d.cmd.Start())
	slave.Close()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			d.screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() { d.done <- d.cmd.Wait() }()
	return d
}

// waitScreen waits until the terminal showed sub.
func (d *ttyDemo) waitScreen(sub string) {
	d.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(d.screen.String(), sub) {
		if time.Now().After(deadline) {
			d.cmd.Process.Kill()
			d.t.Fatalf("the terminal never showed %q:\n%q\nstderr:\n%s", sub, d.screen.String(), d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitCode waits for the demo to end.
func (d *ttyDemo) exitCode(what string) int {
	d.t.Helper()
	select {
	case err := <-d.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		testutil.Success(d.t, err)
		return 0
	case <-time.After(testTimeout):
		d.cmd.Process.Kill()
		d.t.Fatalf("%s did not end the demo: %q\nstderr:\n%s", what, d.screen.String(), d.stderr.String())
		return -1
	}
}

func (d *ttyDemo) typeKeys(s string) {
	d.t.Helper()
	_, err := d.master.WriteString(s)
	testutil.Success(d.t, err)
}

// An interactive session on a real terminal: the status line and prompt
// are drawn, the reply streams, and Ctrl-C typed twice at the prompt
// quits with 130 (Issue #32: once only says so).
func TestInteractive_Terminal(t *testing.T) {
	t.Parallel()
	d := startTTY(t, "--engine", "sim", "--no-playback", "--sim-faults", "delay=20ms")
	screen, waitScreen := &d.screen, d.waitScreen
	waitScreen(" you> ")
	// Two lines at once: the second waits for the first reply, and the
	// status line drawn after that reply counts it as queued.
	d.typeKeys("Hello from a terminal\rAnd again\r")
	waitScreen(echo("Hello from a terminal"))
	waitScreen(echo("And again"))
	if !strings.Contains(screen.String(), " · 1 line(s) queued · ") {
		t.Errorf("no status line counted the queued line: %q", screen.String())
	}
	deadline := time.Now().Add(testTimeout)
	for { // the prompt is drawn again once the second reply has ended
		s := screen.String()
		if strings.Contains(s[strings.LastIndex(s, echo("And again")):], "· F4 · en]") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt after the second reply: %q", screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := screen.String()[strings.Index(screen.String(), echo("Hello from a terminal")):]
	if !strings.Contains(after, "[connected · ") {
		t.Errorf("the prompt after the reply lacks the connection state: %q", after)
	}
	d.typeKeys("\x03")                                                                                         // Ctrl-C
	for deadline := time.Now().Add(testTimeout); !strings.Contains(d.stderr.String(), "Ctrl-C again quits"); { // stderr is a pipe here
		if time.Now().After(deadline) {
			t.Fatalf("one Ctrl-C at the prompt did not say how to quit: %s", d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.typeKeys("\x03")
	testutil.Equal(t, "exit code", d.exitCode("Ctrl-C twice"), exitInterrupted)
}

// Issue #18: the prompt edits the line as terminals do (arrows, Home/End,
// history, Ctrl-A/E/W/U, UTF-8, bracketed paste); no key ever reaches the
// engine as an escape sequence, and Ctrl-D on an empty line quits with 0.
func TestInteractive_LineEditing(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	d := startTTY(t, "--engine", "sim", "--no-playback", "--record", rec)
	d.waitScreen(" you> ")
	const (
		left, up, home, f5                = "\x1b[D", "\x1b[A", "\x1b[H", "\x1b[15~"
		ctrlA, ctrlE, ctrlW, ctrlU, ctrlD = "\x01", "\x05", "\x17", "\x15", "\x04"
		pasteStart, pasteEnd              = "\x1b[200~", "\x1b[201~"
	)
	d.typeKeys("wrld" + ctrlA + "Hello " + ctrlE + left + left + left + "o\r") // Hello world
	d.typeKeys("orld" + "\x1b[1~" + "w" + "\x1b[4~" + "!\r")                   // world! (vt Home/End)
	d.typeKeys(up + up + ctrlW + "there\r")                                    // Hello there
	d.typeKeys("garbage" + ctrlU + "Bye now\r")                                // Bye now
	d.typeKeys("東京café" + home + "在\r")                                        // 在東京café
	d.typeKeys(pasteStart + "pasted\ttext" + pasteEnd + "\r")                  // pasted text
	d.typeKeys(f5 + "ok" + left + left + "\x1bOP" + "\r")                      // ok (F1 as SS3)
	want := []string{"Hello world", "world!", "Hello there", "Bye now", "在東京café", "pasted text", "ok"}
	d.waitScreen(echo("ok"))
	d.typeKeys(ctrlD)
	testutil.Equal(t, "exit code", d.exitCode("Ctrl-D"), exitOK)
	var got []string
	for _, m := range recorded(t, rec, "reply.request") {
		got = append(got, m["event"].(map[string]any)["text"].(string))
	}
	testutil.Equal(t, "texts sent", got, want)
	for _, w := range want {
		if !strings.Contains(d.screen.String(), echo(w)) {
			t.Errorf("the reply to %q is not on the terminal", w)
		}
	}
}
