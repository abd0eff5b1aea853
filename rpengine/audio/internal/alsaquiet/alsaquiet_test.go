//go:build cgo && linux

package alsaquiet

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDo runs itself in a child process (so the child's C stderr can be
// read) and opens an impossible ALSA device, once with Do and once
// without. Without Do, ALSA prints to stderr; with Do, it prints nothing
// and the message comes back as reason.
func TestDo(t *testing.T) {
	if mode := os.Getenv("ALSAQUIET_CHILD"); mode != "" {
		child(mode)
		return
	}
	run := func(mode string) (stdout, stderr string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDo$")
		cmd.Env = append(os.Environ(), "ALSAQUIET_CHILD="+mode)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("child %s: %v\nstdout: %s\nstderr: %s", mode, err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	out, loud := run("loud")
	if strings.Contains(out, "NOLIB") {
		t.Skip("libasound.so.2 is not installed: nothing to keep quiet")
	}
	if !strings.Contains(loud, "ALSA lib") {
		t.Skipf("this libasound printed nothing for a missing card (stderr %q): nothing to compare", loud)
	}
	out, quiet := run("quiet")
	inside, after, found := strings.Cut(quiet, "AFTER")
	if !found {
		t.Fatalf("child did not finish; stderr: %q", quiet)
	}
	if strings.Contains(inside, "ALSA lib") {
		t.Errorf("ALSA printed to stderr inside Do:\n%s", inside)
	}
	if !strings.Contains(out, "REASON=") || strings.Contains(out, "REASON=\n") {
		t.Errorf("Do returned no reason; child stdout: %q", out)
	}
	if !strings.Contains(out, "ERR=boom") {
		t.Errorf("Do did not return open's error; child stdout: %q", out)
	}
	// After Do, the previous handler is back: ALSA prints again.
	if !strings.Contains(after, "ALSA lib") {
		t.Errorf("ALSA's handler was not restored after Do; stderr: %q", quiet)
	}
}

func child(mode string) {
	if mode == "loud" {
		if probeMissingCard() == -1 {
			os.Stdout.WriteString("NOLIB\n")
		}
		return
	}
	reason, err := Do(func() error {
		probeMissingCard()
		return errors.New("boom")
	})
	os.Stdout.WriteString("REASON=" + reason + "\nERR=" + err.Error() + "\n")
	os.Stderr.WriteString("AFTER\n")
	probeMissingCard()
}
