//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// An interactive session on a real terminal: the status line and prompt
// are drawn, the reply streams, and Ctrl-C typed at the prompt (the
// terminal turns it into SIGINT) quits with 130.
func TestInteractive_Terminal(t *testing.T) {
	t.Parallel()
	master, slave, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(demoBin, "--engine", "sim", "--no-playback", "--sim-faults", "delay=20ms")
	cmd.Stdin, cmd.Stdout = slave, slave
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	testutil.Success(t, cmd.Start())
	slave.Close()
	var screen testutil.SyncBuffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitScreen := func(sub string) {
		t.Helper()
		deadline := time.Now().Add(testTimeout)
		for !strings.Contains(screen.String(), sub) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the terminal never showed %q:\n%q\nstderr:\n%s", sub, screen.String(), stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitScreen(" you> ")
	// Two lines at once: the second waits for the first reply, and the
	// status line drawn after that reply counts it as queued.
	_, err = master.WriteString("Hello from a terminal\rAnd again\r")
	testutil.Success(t, err)
	waitScreen(echo("Hello from a terminal"))
	waitScreen(echo("And again"))
	if !strings.Contains(screen.String(), " · 1 line(s) queued · ") {
		t.Errorf("no status line counted the queued line: %q", screen.String())
	}
	deadline := time.Now().Add(testTimeout)
	for strings.Count(screen.String(), "· F4 · en]") < 3 { // the prompt is drawn again
		if time.Now().After(deadline) {
			t.Fatalf("no second prompt: %q", screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := screen.String()[strings.Index(screen.String(), echo("Hello from a terminal")):]
	if !strings.Contains(after, "[connected · ") {
		t.Errorf("the prompt after the reply lacks the connection state: %q", after)
	}
	_, err = master.WriteString("\x03") // Ctrl-C
	testutil.Success(t, err)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit: %v, want code %d", err, exitInterrupted)
		}
	case <-time.After(testTimeout):
		cmd.Process.Kill()
		t.Fatal("Ctrl-C did not end the demo")
	}
}
