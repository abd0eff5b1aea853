package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// tmuxDemo is the demo running in a tmux pane: a real terminal emulator,
// which draws what the demo writes, so a test reads the screen and the
// cursor as a player sees them. stderr goes to the pane too.
type tmuxDemo struct {
	t      *testing.T
	sock   string // the tmux server's socket, of this test alone
	status string // the file the demo's exit status is written to
}

// startTmux runs the demo with args in a detached tmux session of cols
// columns, or skips the test when tmux is not installed.
func startTmux(t *testing.T, cols int, args ...string) *tmuxDemo {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal tests need it")
	}
	dir := t.TempDir()
	d := &tmuxDemo{t: t, sock: filepath.Join(dir, "tmux"), status: filepath.Join(dir, "status")}
	// The pane outlives the demo, so that its screen can still be read.
	sh := strings.Join(quote(append([]string{demoBin}, args...)), " ") + "; echo $? > " + d.status + "; exec sleep 3600"
	d.tmux("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", "30", sh)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s", d.screen())
		}
		_ = exec.Command("tmux", "-S", d.sock, "kill-server").Run()
	})
	return d
}

func quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// tmux runs a tmux command on the test's server and returns its output.
func (d *tmuxDemo) tmux(args ...string) string {
	d.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", d.sock}, args...)...).CombinedOutput()
	if err != nil {
		d.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types s as it is (tmux send-keys -l), or, with named, tmux key
// names such as Home, C-c or Enter.
func (d *tmuxDemo) keys(s string) { d.tmux("send-keys", "-l", s) }

func (d *tmuxDemo) named(keys ...string) { d.tmux(append([]string{"send-keys"}, keys...)...) }

// screen is what the pane shows, one line per row, trailing blanks cut.
func (d *tmuxDemo) screen() string { return d.tmux("capture-pane", "-p") }

// until waits until ok holds for the screen, and returns that screen.
func (d *tmuxDemo) until(what string, ok func(screen string) bool) string {
	d.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		s := d.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the terminal never showed %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shows waits until the screen holds sub.
func (d *tmuxDemo) shows(sub string) string {
	d.t.Helper()
	return d.until(strconv.Quote(sub), func(s string) bool { return strings.Contains(s, sub) })
}

// row returns the pane's row the cursor is on, and the cursor's column.
func (d *tmuxDemo) row() (string, int) {
	d.t.Helper()
	f := strings.SplitN(strings.TrimSpace(d.tmux("display-message", "-p", "#{cursor_y} #{cursor_x}")), " ", 2)
	y, _ := strconv.Atoi(f[0])
	x, _ := strconv.Atoi(f[1])
	return strings.Split(d.screen(), "\n")[y], x
}

// promptIs waits until the cursor's row is a prompt ("[status] you> ")
// followed by line, the cursor col columns into the line.
func (d *tmuxDemo) promptIs(line string, col int) {
	d.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		r, x := d.row()
		r = strings.TrimRight(r, " ")
		status, typed, ok := strings.Cut(r, "] you>")
		typed = strings.TrimPrefix(typed, " ")
		at := utf8.RuneCountInString(status + "] you> ") // the status has no wide character
		if ok && strings.HasPrefix(status, "[") && typed == strings.TrimRight(line, " ") && x == at+col {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the prompt row is %q with the cursor at %d, want the prompt, %q and the cursor %d columns into it", r, x, line, col)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitStatus waits for the demo to end and returns its exit status.
func (d *tmuxDemo) exitStatus() int {
	d.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		if b, err := os.ReadFile(d.status); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			testutil.Success(d.t, err)
			return n
		}
		if time.Now().After(deadline) {
			d.t.Fatal("the demo did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// simPrompt is the status and prompt the demo draws with the simulated
// engine.
const simPrompt = "[connected · F4 · en] you> "

// Issue #32 (item 7): the line editor counts display columns, and moves
// and deletes by grapheme cluster, on a real terminal: wide CJK
// characters and emoji take two columns, a combining mark none. At 40
// columns the status line is drawn once, and the row never wraps.
func TestTerminal_WideInput(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	d := startTmux(t, 80, "--engine", "sim", "--no-playback", "--record", rec)
	d.promptIs("", 0)

	d.keys("日本語 abc")
	d.promptIs("日本語 abc", 10)
	d.named("Home")
	d.keys("X")
	d.promptIs("X日本語 abc", 1)
	d.named("C-a")
	d.promptIs("X日本語 abc", 0)
	d.named("End")
	d.promptIs("X日本語 abc", 11)
	d.named("Left", "Left", "Left", "BSpace") // the space before abc
	d.promptIs("X日本語abc", 7)
	d.named("BSpace") // 語, both its columns
	d.promptIs("X日本abc", 5)
	d.named("Enter")
	d.shows(echo("X日本abc"))

	// An emoji, and é as e and a combining acute accent: one column.
	d.keys("🍺 e\u0301!")
	d.promptIs("🍺 e\u0301!", 5)
	d.named("Left", "Left") // over ! and é
	d.promptIs("🍺 e\u0301!", 3)
	d.named("Left", "Left", "Delete") // the beer, whole
	d.promptIs(" e\u0301!", 0)
	d.named("Enter")
	d.shows(echo("e\u0301!")) // the line is sent trimmed

	// 40 columns: the status line is drawn once, on one row with the line
	// typed, which scrolls sideways instead of wrapping.
	d.tmux("resize-window", "-x", "40")
	s := d.until("the prompt redrawn at 40 columns", func(s string) bool {
		return strings.Count(s, "[connected") == 1 && strings.Contains(s, "\n"+strings.TrimSpace(simPrompt))
	})
	long := "a line much longer than the forty columns of this terminal"
	d.keys(long)
	// Until the keys are echoed (the terminal is read while they arrive).
	deadline := time.Now().Add(testTimeout)
	for {
		r, x := d.row()
		if strings.HasPrefix(r, simPrompt) && strings.HasSuffix(strings.TrimRight(r, " "), "terminal") && x <= 39 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("at 40 columns the prompt row is %q with the cursor at %d, want the end of the line in view", r, x)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.named("Enter")
	// The reply, then the prompt and its status drawn again: under load
	// the screen can be read while the reply is still on its way.
	s = d.until("the reply to the long line and the prompt back", func(s string) bool {
		return strings.Contains(s, "You said: a line") && strings.Count(s, "[connected") >= 1
	})
	if n := strings.Count(s, "[connected"); n != 1 {
		t.Errorf("the status line is on the screen %d times, want once:\n%s", n, s)
	}
	d.named("C-d")
	testutil.Equal(t, "exit status", d.exitStatus(), exitOK)

	var got []string
	for _, m := range recorded(t, rec, "reply.request") {
		got = append(got, m["event"].(map[string]any)["text"].(string))
	}
	testutil.Equal(t, "texts sent", got, []string{"X日本abc", "e\u0301!", long})
}

// Issue #32 (item 8): Ctrl-C as in a shell. It clears a half-typed line;
// at an empty line it cancels the reply that is streaming; at an empty
// prompt it quits only when pressed twice in a row.
func TestTerminal_CtrlC(t *testing.T) {
	t.Parallel()
	d := startTmux(t, 100, "--engine", "sim", "--no-playback", "--sim-faults", "delay=200ms")
	d.promptIs("", 0)
	d.keys("half typed")
	d.named("C-c")
	d.promptIs("", 0)

	d.keys("Tell me everything")
	d.named("Enter")
	d.shows("sent as snapshot")
	d.named("C-c")
	d.shows("rpengine-demo: reply cancelled")
	d.promptIs("", 0) // still running

	d.named("C-c")
	d.shows("Ctrl-C again quits")
	d.keys("x") // a key between: the next Ctrl-C clears the line
	d.named("C-c")
	d.promptIs("", 0)
	d.named("C-c")
	time.Sleep(300 * time.Millisecond) // time to quit, wrongly
	d.promptIs("", 0)
	d.named("C-c")
	testutil.Equal(t, "exit status", d.exitStatus(), exitInterrupted)
}
