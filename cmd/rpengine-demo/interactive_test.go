package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// requestOf decodes the fields of a reply.request the tests look at.
type sentRequest struct {
	RequestID string `json:"requestId"`
	Event     struct {
		Text string `json:"text"`
	} `json:"event"`
	Output struct {
		Modalities []string `json:"modalities"`
		Language   string   `json:"language"`
		Audio      *struct {
			Voice string `json:"voice"`
		} `json:"audio"`
	} `json:"output"`
	Player *struct {
		DisplayName string `json:"displayName"`
	} `json:"player"`
}

func requests(t *testing.T, eng *enginetest.Engine) []sentRequest {
	t.Helper()
	var out []sentRequest
	for _, m := range eng.Received() {
		if m.Err != nil {
			t.Errorf("the engine refused %s: %v", m.Type, m.Err)
		}
		if m.Type != "reply.request" {
			continue
		}
		var r sentRequest
		testutil.Success(t, json.Unmarshal(m.Raw, &r))
		out = append(out, r)
	}
	return out
}

// An interactive session through a stdin pipe, in real mode with a fake
// engine that connects only after lines were typed: the lines are queued
// and answered in order, slash commands change the requests, /card shows
// how an edited card travels, and EOF quits after the last reply.
func TestInteractive_Session(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	edited := filepath.Join(dir, "wren-edited.json")
	testutil.Success(t, os.WriteFile(edited, bytes.Replace(builtinCard, []byte("eleven winters"), []byte("twelve winters"), 1), 0o644))
	invalid := filepath.Join(dir, "invalid.json")
	// Missing fields are repaired on load (Issue #18); a blank name is not.
	testutil.Success(t, os.WriteFile(invalid, []byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":" "}}`), 0o644))

	d := startDemo(t, true, "--port", "0", "--player", "Sam", "--no-playback")
	port := d.port()
	d.writeLine("Hello")
	d.writeLine("/voice M2")
	d.writeLine("Is the lamp lit?")
	d.waitStderr("waiting (Ctrl-C quits) for the engine to connect")
	testutil.Equal(t, "stdout before the engine", d.stdout.String(), "")

	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/rp-engine/socket", nil)
	testutil.Success(t, err)
	defer eng.Close()
	d.waitStdoutLines(2)

	d.writeLine("/card " + invalid)
	// Issue #18: the hint says how to load it again in this session.
	refused := d.waitStderr("then load it again with /card FILE")
	if strings.Contains(refused, "--card") || strings.Contains(refused, "rpcard fix") {
		t.Errorf("the /card hint points elsewhere:\n%s", refused)
	}
	d.writeLine("/card " + edited)
	d.waitStderr(`"Wren" sent as patch`)
	d.writeLine("/lang fr")
	d.writeLine("/text-only")
	d.writeLine("Bonsoir")
	d.writeLine("/nope")
	d.writeLine("/help")
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)

	testutil.Equal(t, "stdout", d.stdout.String(),
		echo("Hello")+"\n"+echo("Is the lamp lit?")+"\n"+echo("Bonsoir")+"\n")
	stderr := d.stderr.String()
	for _, want := range []string{"voice M2", "unknown command /nope", "/browser-mic", "replies in fr", "text only: true",
		"/data/name: must not be blank"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	reqs := requests(t, eng)
	testutil.Equal(t, "requests", len(reqs), 3)
	testutil.Equal(t, "texts", []string{reqs[0].Event.Text, reqs[1].Event.Text, reqs[2].Event.Text},
		[]string{"Hello", "Is the lamp lit?", "Bonsoir"})
	testutil.Equal(t, "first voice", reqs[0].Output.Audio.Voice, "F4")
	testutil.Equal(t, "second voice", reqs[1].Output.Audio.Voice, "M2")
	testutil.Equal(t, "player", reqs[0].Player.DisplayName, "Sam")
	testutil.Equal(t, "last language", reqs[2].Output.Language, "fr")
	testutil.Equal(t, "last modalities", reqs[2].Output.Modalities, []string{"text"})
	if reqs[2].Output.Audio != nil {
		t.Error("text-only request asks for audio")
	}
	if h, _ := eng.CardHash("rpengine-demo", "wren"); h == "" {
		t.Error("the engine holds no card for wren")
	}
}

// Ctrl-C during a reply cancels it and the session goes on; at the
// prompt, Ctrl-C quits with 130.
func TestInteractive_Interrupt(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--engine", "sim", "--sim-faults", "delay=50ms", "--no-playback")
	d.writeLine("Tell me everything")
	d.waitStderr("sent as snapshot")
	d.interrupt()
	d.waitStderr("reply cancelled")
	d.writeLine("Short one")
	d.waitFor(&d.stdout, func(s string) bool { return strings.Contains(s, echo("Short one")+"\n") }, "the second reply")
	d.interrupt()
	testutil.Equal(t, "exit code", d.exitCode(), exitInterrupted)
	if !strings.Contains(d.stderr.String(), "cancelling the reply") {
		t.Error("stderr does not say the reply is being cancelled")
	}
}

// A lost connection before an interactive reply ends. Before any of its
// text was shown, the line is sent again once the engine is back. Once
// some was shown, what arrived is kept, said to be cut, and the turn is
// not sent again: the player would read it twice (Issue #31), as when the
// whole text had streamed and only reply.text.completed was missing. The
// next line is answered by the engine that came back.
func TestInteractive_Reconnect(t *testing.T) {
	t.Parallel()
	// The messages the fake counts (not its hello and first ack), text
	// only: capacity.update, then for "one" ack, reply.accepted,
	// capacity.update, six deltas ("I", " hear", " you.", " You", " said:",
	// " one"), reply.text.completed.
	for _, tc := range []struct {
		name      string
		after     int    // engine messages before the connection drops
		shown     string // what stdout shows of the first reply
		requests  int    // reply.request messages sent
		stderrSay string
	}{
		{"before any text", 2, echo("one"), 3, "sending the turn again"},
		{"mid-text", 6, "I hear", 2, "the reply above may be cut short; the turn is not sent again"},
		{"all text, not completed", 10, echo("one"), 2, "the reply above may be cut short; the turn is not sent again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			d := startDemo(t, true, "--engine", "sim", "--sim-faults", "disconnect-after="+strconv.Itoa(tc.after),
				"--no-playback", "--text-only", "--record", rec)
			d.writeLine("one")
			d.writeLine("two")
			d.closeStdin()
			testutil.Equal(t, "exit code", d.exitCode(), exitOK)
			testutil.Equal(t, "stdout", d.stdout.String(), tc.shown+"\n"+echo("two")+"\n")
			if !strings.Contains(d.stderr.String(), tc.stderrSay) {
				t.Errorf("stderr does not say %q", tc.stderrSay)
			}
			testutil.Equal(t, "reply.request sent", len(recorded(t, rec, "reply.request")), tc.requests)
		})
	}
}

// /browser-mic captures through the RPEngine page: its state, level and
// transcript are shown, and the reply to what was said streams.
func TestInteractive_BrowserMic(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--engine", "sim", "--no-playback")
	d.writeLine("/browser-mic")
	d.waitStdoutLines(1)
	mic := hasMicrophone()
	if !mic {
		d.writeLine("/mic") // no microphone (CI): said once, the demo goes on
		d.writeLine("/mic")
	}
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)
	testutil.Equal(t, "stdout", d.stdout.String(), echo("Hello there.")+"\n")
	stderr := d.stderr.String()
	for _, want := range []string{"listening through the RPEngine page", "browser capture: listening",
		"browser capture: speech_ended", `you said: "Hello there."`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if n := strings.Count(stderr, "no microphone ("); !mic && n != 1 {
		t.Errorf("the missing microphone was reported %d times", n)
	}
}

// hasSpeaker reports whether this machine can play sound.
func hasSpeaker() bool {
	o, err := audio.OpenDevice(nil)
	if err != nil {
		return false
	}
	o.Close()
	return true
}

// Turning speech off and on again (/text-only, /voice) reopens playback;
// a missing sound device is still reported only once, and the demo goes on.
func TestInteractive_NoDeviceOnce(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--engine", "sim")
	for _, l := range []string{"/text-only", "/text-only", "/voice M1", "Hello"} {
		d.writeLine(l)
	}
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)
	testutil.Equal(t, "stdout", d.stdout.String(), echo("Hello")+"\n")
	checkNoDeviceOnce(t, d.stderr.String(), "")
}

// hasMicrophone reports whether this machine has a capture device (then
// /mic would really record, which a test cannot drive).
func hasMicrophone() bool {
	r, err := audio.OpenRecorder(nil)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// With --wait, an interactive session whose engine never connects ends
// with exit code 3; the line typed is not lost silently but reported.
func TestInteractive_NoEngine(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--port", "0", "--wait", "300ms", "--no-playback")
	d.writeLine("Anyone home?")
	testutil.Equal(t, "exit code", d.exitCode(), exitNoEngine)
	testutil.Equal(t, "stdout", d.stdout.String(), "")
	if !strings.Contains(d.stderr.String(), "no engine connected within --wait 300ms") {
		t.Error("stderr does not say no engine connected")
	}
}

// Issue #18: SIGTERM is not a Ctrl-C: during a reply it cancels the reply
// and quits at once, and at the prompt it quits, both with 143 and saying
// so.
func TestInteractive_SIGTERM(t *testing.T) {
	t.Parallel()
	for _, during := range []bool{true, false} {
		t.Run(map[bool]string{true: "during a reply", false: "at the prompt"}[during], func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, true, "--engine", "sim", "--sim-faults", "delay=50ms", "--no-playback")
			if during {
				d.writeLine("Tell me everything")
				d.waitStderr("sent as snapshot")
			} else {
				d.waitStderr("type a line")
			}
			testutil.Success(t, d.cmd.Process.Signal(syscall.SIGTERM))
			testutil.Equal(t, "exit code", d.exitCode(), exitTerminated)
			stderr := d.stderr.String()
			if !strings.Contains(stderr, "terminated (SIGTERM)") || strings.Contains(stderr, "Ctrl-C again") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

// Issue #18: a key's escape sequence or a control character in piped input
// is removed, and said so, rather than sent to the engine.
func TestInteractive_PipedControlCharacters(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	d := startDemo(t, true, "--engine", "sim", "--no-playback", "--record", rec)
	d.writeLine("Hi\x1b[D there\x07")
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)
	reqs := recorded(t, rec, "reply.request")
	testutil.Equal(t, "text sent", reqs[0]["event"].(map[string]any)["text"], any("Hi there"))
	if !strings.Contains(d.stderr.String(), "removed 4 control characters from the line") {
		t.Errorf("stderr:\n%s", d.stderr.String())
	}
}

// Issue #18: EOF ends the session cleanly: the demo closing its own
// simulated engine is not reported as the engine going away.
func TestInteractive_EOFQuitsQuietly(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--engine", "sim", "--no-playback")
	d.writeLine("Good night")
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)
	if stderr := d.stderr.String(); strings.Contains(stderr, "engine disconnected") {
		t.Errorf("quitting said the engine disconnected:\n%s", stderr)
	}
}
