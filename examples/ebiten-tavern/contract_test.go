package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
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
	contract(t, nil, nil)
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
	stderr, _ := contract(t, []string{"ALSA_CONFIG_PATH=" + none, "PULSE_SERVER=unix:/nonexistent", "JACK_NO_START_SERVER=1"}, nil)
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ebiten-tavern: no sound device, so no sound") {
		t.Errorf("stderr is not the one line that says there is no sound:\n%s", stderr)
	}
}

// Issue #36: with --inspect the game serves the inspector page and prints
// its URL at start; while the reply plays, the page opens (and without
// its token is refused), and its event stream shows the reply's row, its
// text and where the speaker is in it. The contract holds all the same.
func TestContract_inspect(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the contract builds and runs the game")
	}
	contract(t, nil, func(stderr *testutil.SyncBuffer, exited <-chan struct{}) {
		page := waitPage(t, stderr, exited)
		if code := get(t, page.String()); code != http.StatusOK {
			t.Errorf("the page: HTTP %d, want 200", code)
		}
		if code := get(t, "http://"+page.Host+"/?token=0123456789abcdef"); code != http.StatusForbidden {
			t.Errorf("a wrong token: HTTP %d, want 403", code)
		}
		events := *page
		events.Path = "/events"
		watchReply(t, events.String(), "You said: Hello there")
	}, "--inspect", "127.0.0.1:0")
}

// Issue #32: a PNG card's picture is drawn where the character stands.
func TestContract_portrait(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the contract builds and runs the game")
	}
	data, err := os.ReadFile("../../testdata/cards/full.json")
	if err != nil {
		t.Fatal(err)
	}
	cyan := color.NRGBA{0, 0xff, 0xff, 0xff} // a colour the scene has nowhere
	pic := image.NewNRGBA(image.Rect(0, 0, 40, 60))
	draw.Draw(pic, pic.Bounds(), image.NewUniform(cyan), image.Point{}, draw.Src)
	file := filepath.Join(t.TempDir(), "mira.png")
	if err := os.WriteFile(file, pngCard(t, pic, string(data)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, shot := contract(t, nil, nil, "--card", file)
	n := 0 // cyan pixels where the character stands, above the bar
	for y := 40; y < counterY; y++ {
		for x := charX - 100; x < charX+100; x++ {
			if r, g, b, _ := shot.At(x, y).RGBA(); r>>8 < 64 && g>>8 > 192 && b>>8 > 192 {
				n++
			}
		}
	}
	if n < 100*200 { // the picture is scaled to about 157x236
		t.Errorf("%d pixels of the portrait's colour where the character stands, want the portrait", n)
	}
}

// contract runs the contract's command with env and args added, calls
// during (unless nil) while it runs with its stderr so far and a channel
// closed when it exits, checks what it wrote, and returns its stderr and
// screenshot.
func contract(t *testing.T, env []string, during func(stderr *testutil.SyncBuffer, exited <-chan struct{}), args ...string) (stderr string, shot image.Image) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out.png")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", ".", "--engine", "sim", "--say", "Hello there", "--screenshot", file, "--exit-after-reply"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	var errb testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var err error
	go func() { err = cmd.Wait(); close(exited) }()
	defer func() { cancel(); <-exited }() // a failed during kills it
	if during != nil {
		during(&errb, exited)
	}
	<-exited
	if err != nil {
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
	return errb.String(), checkScreenshot(t, file)
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
		{[]string{"--inspect", "0.0.0.0:6060"}, 2, "", `ebiten-tavern: --inspect "0.0.0.0:6060": want a loopback address`}, // Issue #36
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

// checkScreenshot checks the scene was drawn, with the reply's subtitles,
// and returns it.
func checkScreenshot(t *testing.T, shot string) image.Image {
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
	return img
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

var pageRE = regexp.MustCompile(`ebiten-tavern: inspector page: (http://127\.0\.0\.1:\d+/\?token=\S+)\n`)

// waitPage waits for the inspector's URL on stderr.
func waitPage(t *testing.T, stderr *testutil.SyncBuffer, exited <-chan struct{}) *url.URL {
	t.Helper()
	for {
		if m := pageRE.FindStringSubmatch(stderr.String()); m != nil {
			u, err := url.Parse(m[1])
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		select {
		case <-exited:
			t.Fatalf("the game exited without printing the inspector's URL:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func get(t *testing.T, u string) int {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// watchReply reads the inspector's event stream at u until a reply with
// a row has text containing want and the speaker's heard position in it,
// and fails if the stream ends first (the game exited).
func watchReply(t *testing.T, u, want string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rows, text, heard := map[string]bool{}, map[string]string{}, map[string]bool{}
	type reply struct{ ID, Text string }
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	event := ""
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.Contains(" snapshot reply text heard ", " "+event+" ") {
			continue
		}
		var v struct {
			Replies []reply // snapshot
			reply           // reply, text and heard
			Whole   bool
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event %s: %v", event, err)
		}
		switch event {
		case "snapshot":
			for _, r := range v.Replies {
				rows[r.ID], text[r.ID] = true, r.Text
			}
		case "reply":
			rows[v.ID] = true
		case "text":
			if !v.Whole {
				v.Text = text[v.ID] + v.Text
			}
			text[v.ID] = v.Text
		case "heard":
			heard[v.ID] = true
		}
		for id := range rows {
			if heard[id] && strings.Contains(text[id], want) {
				return
			}
		}
	}
	t.Fatalf("the event stream ended (%v) before a reply said %q and was heard: rows %v, text %q, heard %v", sc.Err(), want, rows, text, heard)
}
