package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// build compiles the command once, without -race, so the test runs the real
// binary as a user would.
func build(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found; cannot build the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "neurosan-chat")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "neurosan-chat")
		out, err := exec.Command(goBin, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func runBinary(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestBinary_fakeConversation(t *testing.T) {
	t.Parallel()
	out := runBinary(t, "cats\ndogs\n/reset\nowls\n/quit\n", "--fake", "--fake-delay", "0", "--agent", "games/quest_designer")
	for _, want := range []string{
		"chatting with games/quest_designer: Designs side quests",
		`agent> Quest 1: about "cats"`,
		`agent> Quest 2: about "dogs"`, // the conversation continued
		"(new conversation)",
		`agent> Quest 1: about "owls"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "lore_keeper") {
		t.Errorf("intermediate messages shown without --verbose:\n%s", out)
	}
}

func TestBinary_verbose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "log.jsonl")
	out := runBinary(t, "times\n", "--fake", "--fake-delay", "0", "--verbose", "--agent", "math_guy", "--sly", "x=6", "--sly", "y=7", "--record", rec)
	for _, want := range []string{
		"[math_guy AI] Calling the calculator with x * y.",
		"[math_guy/calculator] progress 50%",
		"[math_guy/calculator AGENT_TOOL_RESULT] 42",
		"agent> 6 * 7 = 42",
		`sly_data: {"equals":42}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	log, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `"dir":"out"`) || !strings.Contains(string(log), `"AGENT_FRAMEWORK"`) {
		t.Errorf("record file lacks the exchange:\n%s", log)
	}
}

func TestBinary_listsAgents(t *testing.T) {
	t.Parallel()
	out := runBinary(t, "", "--fake", "--fake-delay", "0")
	if !strings.Contains(out, "available: games/quest_designer") || !strings.Contains(out, "chatting with math_guy") {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestBinary_unknownAgent(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(build(t), "--fake", "--agent", "nobody")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no agent network "nobody"`) {
		t.Errorf("want a not-found failure, got %v:\n%s", err, out)
	}
}

// Ctrl-C during a turn cancels that turn only; the chat goes on.
func TestBinary_interruptCancelsTurn(t *testing.T) {
	t.Parallel()
	// With an hour's pause after every line, the turn is stuck after its
	// first intermediate message until interrupted.
	cmd := exec.Command(build(t), "--fake", "--fake-delay", "1h", "--verbose", "--agent", "games/quest_designer")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("(turn cancelled)")
	stdin.Close()
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "agent> ") {
		t.Errorf("the cancelled turn still answered:\n%s", out.String())
	}
}
