package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// Control sequences an engine could send to take over a terminal: set the
// window title (OSC), clear the screen (CSI), their 8-bit forms, and a
// bidi override.
const hostileText = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u009d0;t\u009c\u202e"

// escapedHostile is hostileText as the demo shows it.
const escapedHostile = `\x1b]0;pwned\x07\x1b[2J\u009b31m\u009d0;t\u009c\u202e`

// checkTerminalSafe fails unless out holds nothing a terminal would
// interpret and no line longer than maxLine bytes.
func checkTerminalSafe(t *testing.T, name, out string, maxLine int) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u202e' || r == '\uFFFD' {
			t.Fatalf("%s holds %q at byte %d:\n%.3000s", name, r, i, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > maxLine {
			t.Errorf("%s has a line of %d bytes: %.300s...", name, len(line), line)
		}
	}
}

// Issue #16: ESC sequences in the engine's clientVersion, in the reply
// text and in a request.error reached the terminal unchanged, and 1 MiB
// values were printed whole (64 KiB here: a hello that size still fits the
// handshake deadline under -race on a busy machine). The reply on stdout is data: newlines and
// tabs are kept, control characters escaped; everything on stderr is
// escaped and bounded.
func TestScripted_PeerTextEscaped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script enginetest.Script
		code   int
		stdout string
		stderr []string
	}{
		{"reply text", enginetest.Script{Sentences: []string{"Hi" + hostileText + ".", "Tab\there, back\\slash."}},
			exitOK, "Hi" + escapedHostile + ". Tab\there, back\\slash.\n", nil},
		{"request.error", enginetest.Script{Error: hostileText + strings.Repeat("c", 64<<10), ErrorMessage: hostileText + strings.Repeat("m", 64<<10)},
			exitEngineError, "", []string{"engine error " + escapedHostile + "ccc", ": " + escapedHostile + "mmm", "…(+"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, false, "--port", "0", "--say", "hi", "--wait", "20s", "--no-playback")
			url := "ws://127.0.0.1:" + strconv.Itoa(d.port()) + "/rp-engine/socket"
			eng, err := enginetest.Dial(ctxT(t), url, &enginetest.Options{
				ClientVersion: hostileText + strings.Repeat("v", 64<<10),
				Responder:     func(enginetest.Request) enginetest.Script { return tc.script },
			})
			testutil.Success(t, err)
			defer eng.Close()
			testutil.Equal(t, "exit code", d.exitCode(), tc.code)
			testutil.Equal(t, "stdout", d.stdout.String(), tc.stdout)
			stderr := d.stderr.String()
			checkTerminalSafe(t, "stderr", stderr, 4<<10)
			for _, want := range append(tc.stderr, "engine connected: "+escapedHostile+"vvv") {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%.3000s", want, stderr)
				}
			}
		})
	}
}

// Issue #16: the same in an interactive session, for what a voice capture
// through the page shows: its state and transcript, and the reply text
// streamed to stdout as it arrives.
func TestInteractive_PeerTextEscaped(t *testing.T) {
	t.Parallel()
	d := startDemo(t, true, "--port", "0", "--no-playback")
	url := "ws://127.0.0.1:" + strconv.Itoa(d.port()) + "/rp-engine/socket"
	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, url, &enginetest.Options{
		Responder: func(r enginetest.Request) enginetest.Script {
			return enginetest.Script{Transcript: "Hello" + hostileText, Sentences: []string{"Said" + hostileText + "."}}
		},
		Faults: enginetest.Faults{Delay: 50 * time.Millisecond}, // time to send a state of our own
	})
	testutil.Success(t, err)
	defer eng.Close()
	d.writeLine("/browser-mic")
	start, err := eng.WaitType(ctx, "voice.capture.start")
	testutil.Success(t, err)
	var req struct {
		RequestID string `json:"requestId"`
	}
	testutil.Success(t, json.Unmarshal(start.Raw, &req))
	_, err = eng.Send(ctx, "voice.capture.state", map[string]any{"requestId": req.RequestID, "state": hostileText + strings.Repeat("s", 64<<10), "seconds": 1})
	testutil.Success(t, err)
	d.waitStdoutLines(1)
	d.closeStdin()
	testutil.Equal(t, "exit code", d.exitCode(), exitOK)
	stdout, stderr := d.stdout.String(), d.stderr.String()
	testutil.Equal(t, "stdout", stdout, "Said"+escapedHostile+".\n")
	checkTerminalSafe(t, "stderr", stderr, 4<<10)
	// The transcript is quoted, as strconv.Quote does (BEL is \a there).
	for _, want := range []string{"browser capture: " + escapedHostile + "sss", "you said: " + strconv.Quote("Hello"+hostileText)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%.3000s", want, stderr)
		}
	}
}
