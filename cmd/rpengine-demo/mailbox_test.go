package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// --mailbox with --engine sim: the fake engine runs in file mode against
// the folder, and the scripted contract holds as over WebSocket: the reply
// text on stdout, its speech (one WAV per sentence in the audio slots)
// written to --out exactly, every segment answered as consumed, and the
// turn sent again when the engine cancels it with connection_lost.
func TestMailbox_Sim(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"", "cancel-lost"} {
		t.Run("faults="+fault, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mbox, out, rec := filepath.Join(dir, "mailbox"), filepath.Join(dir, "reply.wav"), filepath.Join(dir, "rec.jsonl")
			args := []string{"--engine", "sim", "--mailbox", mbox, "--say", "Over the files", "--out", out, "--record", rec}
			if fault != "" {
				args = append(args, "--sim-faults", fault)
			}
			stdout, stderr, code := runDemo(t, args...)
			testutil.Equal(t, "exit code", code, exitOK)
			testutil.Equal(t, "stdout", stdout, echo("Over the files")+"\n")
			checkWAV(t, out, simSpeech())
			for _, want := range []string{"SIMULATED ENGINE", "serving the mailbox folder " + mbox} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if strings.Contains(stderr, "listening on") {
				t.Error("a socket was opened in mailbox mode")
			}
			if _, err := os.Stat(filepath.Join(mbox, "manifest.json")); err != nil {
				t.Errorf("no manifest in the mailbox: %v", err)
			}
			// Every segment of the reply that completed is answered as
			// consumed (the engine then restores its slot).
			reqs := recorded(t, rec, "reply.request")
			last := reqs[len(reqs)-1]["requestId"]
			consumed := map[string]bool{}
			for _, m := range recorded(t, rec, "reply.audio.segment.consumed") {
				consumed[key(m)] = true
			}
			n := 0
			for _, m := range recorded(t, rec, "reply.audio.segment") {
				testutil.Equal(t, "segment direction", m["_dir"], any("in"))
				if m["requestId"] == last {
					n++
					if !consumed[key(m)] {
						t.Errorf("segment %s was not answered as consumed", key(m))
					}
				}
			}
			testutil.Equal(t, "segments of the reply", n, 2)
			if fault != "" {
				testutil.Equal(t, "reply.request sent", len(reqs), 2)
			}
		})
	}
}

// A second demo on a folder another one serves refuses clearly (exit 2,
// naming the flag to change) and leaves the first one's engine alone.
func TestMailbox_InUse(t *testing.T) {
	t.Parallel()
	mbox := filepath.Join(t.TempDir(), "mailbox")
	first := startDemo(t, true, "--engine", "sim", "--mailbox", mbox, "--no-playback")
	first.waitStderr("engine connected")
	_, stderr, code := runDemo(t, "--engine", "sim", "--mailbox", mbox, "--say", "hi")
	testutil.Equal(t, "exit code", code, exitUsage)
	for _, want := range []string{"mailbox folder is in use by another process", "pick another folder with --mailbox"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	testutil.Equal(t, "reports of the failure", strings.Count(stderr, "in use by another process"), 1)

	first.writeLine("Still mine?")
	first.closeStdin()
	testutil.Equal(t, "first demo's exit code", first.exitCode(), exitOK)
	testutil.Equal(t, "first demo's stdout", first.stdout.String(), echo("Still mine?")+"\n")
	testutil.Equal(t, "sessions of the first demo", strings.Count(first.stderr.String(), "engine connected"), 1)
}

// key names a segment by request and sequence.
func key(m map[string]any) string {
	return fmt.Sprintf("%v/%v", m["requestId"], m["segmentSequence"])
}

// When the server stops while the demo waits for input (here another
// process takes the folder's lock over), the demo says so and exits 2
// rather than waiting at a prompt that can no longer be answered.
func TestMailbox_ServerStops(t *testing.T) {
	t.Parallel()
	mbox := filepath.Join(t.TempDir(), "mailbox")
	d := startDemo(t, true, "--engine", "sim", "--mailbox", mbox, "--no-playback")
	d.waitStderr("type a line")
	lock := filepath.Join(mbox, rpengine.MailboxLockName)
	testutil.Success(t, os.WriteFile(lock, []byte(`{"pid":1,"host":"elsewhere","token":"not-the-demo"}`), 0o644))
	testutil.Equal(t, "exit code", d.exitCode(), exitUsage)
	if !strings.Contains(d.stderr.String(), "the server stopped: ") {
		t.Errorf("stderr does not say the server stopped:\n%s", d.stderr.String())
	}
}

// Issue #18: --mailbox creates the folders above the mailbox, and a path
// that cannot be a mailbox is refused before the demo says it serves it.
func TestMailbox_Parents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mbox := filepath.Join(dir, "a", "b", "mailbox")
	_, stderr, code := runDemo(t, "--engine", "sim", "--mailbox", mbox, "--say", "hi", "--no-playback")
	testutil.Equal(t, "exit code", code, exitOK)
	if !strings.Contains(stderr, "serving the mailbox folder "+mbox) {
		t.Errorf("stderr:\n%s", stderr)
	}
	file := filepath.Join(dir, "file")
	testutil.Success(t, os.WriteFile(file, nil, 0o644))
	for _, path := range []string{file, filepath.Join(file, "mailbox")} {
		_, stderr, code = runDemo(t, "--engine", "sim", "--mailbox", path, "--say", "hi", "--no-playback")
		testutil.Equal(t, "exit code", code, exitUsage)
		if strings.Contains(stderr, "serving the mailbox folder") || !strings.Contains(stderr, "pick a") {
			t.Errorf("--mailbox %s:\n%s", path, stderr)
		}
	}
}
