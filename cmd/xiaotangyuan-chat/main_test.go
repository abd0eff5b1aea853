package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// TestBinaryFake builds the command and chats with its --fake Harness
// over loopback TCP, the one test of this area that opens a port.
func TestBinaryFake(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "xiaotangyuan-chat")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	testutil.Success(t, build.Run())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logPath := filepath.Join(dir, "wire.jsonl")
	cmd := exec.CommandContext(ctx, bin, "--fake", "--game", "demo", "--save", "slot-1", "--record", logPath)
	cmd.Stdin = strings.NewReader("hello there\nroll a die please\n/retry\n/ping\n/save\n/save slot-2\n/proactive\nplease interrupt me\nbye\n/quit\nafter quit\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	testutil.Success(t, cmd.Run())
	got := out.String()
	t.Logf("output:\n%s", got)
	for _, want := range []string{
		"reply: You said: hello there\n",
		"pong\n",
		"usage: /save NAME (the save slot to switch to)\n",
		"companion (unprompted): Still there? It is getting dark.\n",
		"reply: You said: bye\n",
	} {
		testutil.Equal(t, "output has "+want, strings.Contains(got, want), true)
	}
	testutil.Equal(t, "nothing after /quit", strings.Contains(got, "after quit"), false)
	// Issue #20: a barge-in ends the stream at "[interrupted]", and the
	// cancelled reply is not printed after it.
	testutil.Equal(t, "interrupted", strings.Contains(got, "Let me tell you a long story. \n[interrupted]\n"), true)
	testutil.Equal(t, "cancelled reply not printed", strings.Contains(got, "Once upon a time"), false)
	testutil.Equal(t, "dice rolled", regexp.MustCompile(`reply: You rolled a [1-6]!\n`).MatchString(got), true)
	testutil.Equal(t, "retry repeats the dice", len(regexp.MustCompile(`reply: You rolled a`).FindAllString(got, -1)), 2)
	testutil.Equal(t, "reconnected for the save switch", strings.Count(got, "[connected]"), 2)

	wire, err := os.ReadFile(logPath)
	testutil.Success(t, err)
	testutil.Equal(t, "atom call recorded", strings.Contains(string(wire), `"method":"game.atom.execute"`), true)
	for _, slot := range []string{"slot-1", "slot-2"} { // --save and /save hash alike
		testutil.Equal(t, "hello with hashed "+slot, strings.Contains(string(wire), `"saveId":"`+xty.SaveID("demo", slot)+`"`), true)
	}
	testutil.Equal(t, "no raw save name", strings.Contains(string(wire), "slot-1"), false)
}

func TestRollDice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{}`, true}, {`{"sides":20}`, true}, {`{"sides":1}`, false}, {`{"sides":"x"}`, false},
	} {
		v, err := rollDice(context.Background(), []byte(tc.args))
		if !tc.ok {
			testutil.Error(t, err)
			continue
		}
		testutil.Success(t, err)
		roll := v.(map[string]int)["roll"]
		testutil.Equal(t, "in range "+tc.args, roll >= 1 && roll <= 20, true)
	}
}
