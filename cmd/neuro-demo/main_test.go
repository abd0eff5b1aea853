package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// binary builds the demo once (without -race, to keep it quick).
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

// runDemo runs the built binary with env (NEURO_SDK_WS_URL removed unless
// given) and returns its output.
func runDemo(t *testing.T, stdin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NEURO_SDK_WS_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("neuro-demo %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func mustContain(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

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
		// them with an actionable message, and she retries.
		mustContain(t, out, "Neuro picked a taken cell; she tries again.", `"success":false,"message":"cell `, "is taken; free cells: ")
		if n := strings.Count(out, "game over: "); n != 3 {
			t.Errorf("%s: %d games over, want 3:\n%s", mode, n, out)
		}
		if mode == "" {
			mustContain(t, out, "Connected to Neuro-sama.")
		}
	}
}

func TestDemo_humanMovesFromStdin(t *testing.T) {
	t.Parallel()
	// Junk and taken cells are asked again; the game must still finish.
	out := runDemo(t, "x\n0\n5\n5\n1\n2\n3\n4\n6\n7\n8\n9\n", nil, "--fake", "--delay", "5ms", "--quiet")
	mustContain(t, out, "You place X on 5.", "game over: ")
	if strings.Contains(out, `"command"`) {
		t.Errorf("--quiet printed wire messages:\n%s", out)
	}
}

// TestDemo_realWebSocket runs the demo over a loopback WebSocket against
// the fake, selected by NEURO_SDK_WS_URL, and checks its traffic with the
// conformance checker.
func TestDemo_realWebSocket(t *testing.T) {
	t.Parallel()
	srv := neurotest.NewServer(&neurotest.Options{Delay: 5 * time.Millisecond, Seed: 3})
	defer srv.Close()
	url := srv.Listen()
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
