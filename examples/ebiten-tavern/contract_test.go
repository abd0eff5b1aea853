package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The automated contract, run as a player would: one turn with the
// simulated engine, a screenshot once the reply has been heard, exit 0.
// The screenshot must show the scene and the subtitles, and the audio
// source must have delivered every sample of the reply to Ebitengine.
// Like every test here it needs a display (CI runs it under Xvfb); with a
// sound device (CI gives ALSA a null one) or without.
func TestContract(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the contract builds and runs the game")
	}
	contract(t, nil)
}

// Issue #32: on a machine without a sound device (ALSA's configuration
// names none, and no sound server answers) the contract holds all the
// same: the game says so in one line and plays silently, and none of
// ALSA's own complaints reach the terminal.
func TestContract_noSoundDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the contract builds and runs the game")
	}
	none := filepath.Join(t.TempDir(), "asound.conf")
	if err := os.WriteFile(none, []byte("# no devices\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := contract(t, []string{"ALSA_CONFIG_PATH=" + none, "PULSE_SERVER=unix:/nonexistent", "JACK_NO_START_SERVER=1"})
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ebiten-tavern: no sound device, so no sound") {
		t.Errorf("stderr is not the one line that says there is no sound:\n%s", stderr)
	}
}

// contract runs the contract's command with env added, checks what it
// wrote, and returns its stderr.
func contract(t *testing.T, env []string) (stderr string) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "out.png")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".", "--engine", "sim", "--say", "Hello there", "--screenshot", shot, "--exit-after-reply")
	cmd.Env = append(os.Environ(), env...)
	var stdout, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errb.String())
	}
	t.Logf("stdout: %s", stdout.String())
	if strings.Contains(errb.String(), "ALSA lib") {
		t.Errorf("ALSA's own messages reached the terminal:\n%s", errb.String())
	}

	got := speechLine(t, stdout.String())
	received, delivered, pulled := got.int(t, "received"), got.int(t, "delivered"), got.int(t, "pulled")
	if rate := got.int(t, "rate"); rate != 44100 || received == 0 {
		t.Fatalf("received %d samples at %d Hz, want speech at 44100 Hz", received, rate)
	}
	if got["done"] != "true" || got["interrupted"] != "false" {
		t.Errorf("done=%s interrupted=%s, want the whole reply heard", got["done"], got["interrupted"])
	}
	// delivered includes the resampler's tail (under 2 ms) on top of the
	// reply's samples.
	if delivered < received || delivered > received+received/100+100 {
		t.Errorf("the audio source delivered %d samples of a %d-sample reply", delivered, received)
	}
	if min := int64(delivered) * sampleRate / 44100; int64(pulled) < min {
		t.Errorf("Ebitengine pulled %d frames, fewer than the %d the reply needs at %d Hz", pulled, min, sampleRate)
	}
	checkScreenshot(t, shot)
	return errb.String()
}

// Issue #32: without a display, --help and a mistake answer as they do
// with one (Ebitengine panicked in its init before), and a run says what
// is missing.
func TestCommandLine_noDisplay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the test builds the game")
	}
	bin := filepath.Join(t.TempDir(), "ebiten-tavern")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // what stdout holds
		stderr string // the one line on stderr starts so
	}{
		{[]string{"--help"}, 0, "\n  --engine MODE\n", ""},
		{[]string{"-h"}, 0, "\n  --say TEXT\n", ""},
		{[]string{"--bogus"}, 2, "", "ebiten-tavern: unknown flag --bogus; run 'ebiten-tavern --help' for usage"},
		{[]string{"--engine", "sim"}, 1, "", "ebiten-tavern: no display"},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), "DISPLAY=", "WAYLAND_DISPLAY=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || (tc.stdout == "" && stdout.Len() > 0) ||
			strings.Count(stderr.String(), "\n") != min(1, len(tc.stderr)) || !strings.HasPrefix(stderr.String(), tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

// checkScreenshot checks the scene was drawn, with the reply's subtitles.
func checkScreenshot(t *testing.T, shot string) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != screenW || b.Dy() != screenH {
		t.Fatalf("screenshot %v, want %dx%d", b, screenW, screenH)
	}
	colours := map[[3]uint32]bool{}
	text := 0 // light pixels on the first line of the subtitles
	for y := 0; y < screenH; y++ {
		for x := 0; x < screenW; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			if y >= boxY+36 && y < boxY+58 && x >= 32 && x < 760 && r>>8 > 200 && g>>8 > 190 && b>>8 > 150 {
				text++
			}
		}
	}
	if len(colours) < 100 {
		t.Errorf("the screenshot has %d colours: blank, or nearly", len(colours))
	}
	if text < 300 {
		t.Errorf("%d light pixels where the subtitles go, want the reply's text", text)
	}
}

// fields is the contract's speech line, key=value.
type fields map[string]string

func speechLine(t *testing.T, out string) fields {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "speech "); ok {
			f := fields{}
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = v
			}
			return f
		}
	}
	t.Fatalf("no speech line in stdout %q", out)
	return nil
}

func (f fields) int(t *testing.T, key string) int {
	t.Helper()
	n, err := strconv.Atoi(f[key])
	if err != nil {
		t.Fatalf("%s=%q: %v", key, f[key], err)
	}
	return n
}
