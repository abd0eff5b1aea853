package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"hash/crc32"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// The fake engine's default reply to an event (enginetest.DefaultScript).
func echo(text string) string { return "I hear you. You said: " + text }

// simSpeech is the speech the fake engine generates for its default
// two-sentence reply: enginetest.Synthesize of each sentence, 0.5 s each
// (enginetest.Options.SecondsPerSentence's default).
func simSpeech() []byte {
	return append(enginetest.Synthesize(0, 0.5), enginetest.Synthesize(1, 0.5)...)
}

func TestScripted_Text(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runDemo(t, "--engine", "sim", "--say", "Hello there")
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("Hello there")+"\n")
	for _, want := range []string{"SIMULATED ENGINE", "not by a model", "(port ", "engine connected: rpengine-demo sim",
		"engine queue 0/20, accepting requests: true", `card "Wren" sent as snapshot`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// checkWAV asserts that file is a 44.1 kHz mono PCM16 WAV holding exactly
// pcm.
func checkWAV(t *testing.T, file string, pcm []byte) {
	t.Helper()
	data, err := os.ReadFile(file)
	testutil.Success(t, err)
	var w audio.WAV
	testutil.Success(t, audio.DecodeWAV(&w, data))
	testutil.Equal(t, "rate", w.SampleRate, 44100)
	testutil.Equal(t, "channels", w.Channels, 1)
	testutil.Equal(t, "bits", w.BitsPerSample, 16)
	testutil.Equal(t, "data bytes", len(data)-wavHeaderBytes, len(pcm))
	if !bytes.Equal(data[wavHeaderBytes:], pcm) {
		t.Fatal("the WAV's samples differ from the speech the engine sent")
	}
}

func TestScripted_TextAndAudioOut(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "reply.wav")
	stdout, stderr, code := runDemo(t, "--engine", "sim", "--say", "Sing", "--out", out, "--voice", "m3")
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("Sing")+"\n")
	checkWAV(t, out, simSpeech())
	checkNoDeviceOnce(t, stderr, "(it is still written to "+out+")")
}

// checkNoDeviceOnce asserts that a missing sound device was reported
// exactly once, with note, or not at all when this machine can play.
func checkNoDeviceOnce(t *testing.T, stderr, note string) {
	t.Helper()
	if strings.Contains(stderr, "ALSA lib") {
		t.Errorf("ALSA's own errors reached stderr:\n%s", stderr)
	}
	n := strings.Count(stderr, "no audio output (")
	if hasSpeaker() {
		testutil.Equal(t, "no-device reports with a sound device", n, 0)
		return
	}
	testutil.Equal(t, "no-device reports", n, 1)
	want := "speech will not be played"
	if note != "" {
		want += " " + note
	}
	if !strings.Contains(stderr, want+"\n") {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// recorded returns the outbound messages of type typ in a --record file.
func recorded(t *testing.T, file, typ string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	testutil.Success(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			T    string         `json:"t"`
			Dir  string         `json:"dir"`
			Note string         `json:"note"`
			Msg  map[string]any `json:"msg"`
		}
		testutil.Success(t, json.Unmarshal(sc.Bytes(), &l))
		if l.Dir == "game" && l.Note != "" && l.T != "" {
			continue // the game's own moments (internal/jsonl), not messages
		}
		if l.T == "" || (l.Dir != "in" && l.Dir != "out") {
			t.Fatalf("bad record line %s", sc.Bytes())
		}
		if l.Msg["type"] == typ {
			l.Msg["_dir"] = l.Dir
			out = append(out, l.Msg)
		}
	}
	testutil.Success(t, sc.Err())
	return out
}

// writeTone writes a stereo WAV of a sine at hz, amplitude amp, at rate.
func writeTone(t *testing.T, file string, rate int, seconds, hz, amp float64) {
	t.Helper()
	n := int(seconds * float64(rate))
	s := make([]float32, 0, 2*n)
	for i := range n {
		v := float32(amp * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
		s = append(s, v, v)
	}
	f, err := os.Create(file)
	testutil.Success(t, err)
	testutil.Success(t, audio.WriteWAV(f, rate, 2, s))
	testutil.Success(t, f.Close())
}

func TestScripted_WavInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		say  string
		rate int
	}{
		{"speech only at 48 kHz", "", 48000},
		{"text and speech at 44.1 kHz", "listen", 44100},
		{"speech already at 16 kHz", "", 16000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in, rec := filepath.Join(dir, "in.wav"), filepath.Join(dir, "rec.jsonl")
			writeTone(t, in, tc.rate, 1, 440, 0.5)
			args := []string{"--engine", "sim", "--wav", in, "--record", rec, "--text-only"}
			if tc.say != "" {
				args = append(args, "--say", tc.say)
			}
			stdout, _, code := runDemo(t, args...)
			testutil.Equal(t, "exit code", code, exitOK)
			heard := tc.say
			if heard == "" { // Issue #32: the fake says what it heard, its length
				heard = "(1.0 seconds of speech)"
			}
			testutil.Equal(t, "stdout", stdout, echo(heard)+"\n")
			reqs := recorded(t, rec, "reply.request")
			testutil.Equal(t, "requests", len(reqs), 1)
			ev := reqs[0]["event"].(map[string]any)
			if tc.say != "" {
				testutil.Equal(t, "event text", ev["text"], any(tc.say))
			} else if _, ok := ev["text"]; ok {
				t.Errorf("event has text %v", ev["text"])
			}
			a := ev["audio"].(map[string]any)
			testutil.Equal(t, "format", a["format"], any("pcm_s16le"))
			testutil.Equal(t, "rate", a["sampleRate"], any(16000.0))
			testutil.Equal(t, "channels", a["channels"], any(1.0))
			pcm, err := base64.StdEncoding.DecodeString(a["data"].(string))
			testutil.Success(t, err)
			checkTone(t, pcm, 16000, 440, 0.5)
		})
	}
}

// checkTone asserts that PCM16 pcm is one second of a sine at hz with
// amplitude amp: exact length, RMS within 2 %, frequency by zero crossings.
func checkTone(t *testing.T, pcm []byte, rate int, hz, amp float64) {
	t.Helper()
	testutil.Equal(t, "samples", len(pcm)/2, rate)
	var sum float64
	crossings := 0
	prev := 0.0
	for i := range len(pcm) / 2 {
		v := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
		sum += v * v
		if i > 0 && (prev < 0) != (v < 0) {
			crossings++
		}
		prev = v
	}
	rms := math.Sqrt(sum / float64(len(pcm)/2))
	if want := amp / math.Sqrt2; math.Abs(rms-want) > 0.02*want {
		t.Errorf("rms %.4f, want %.4f", rms, want)
	}
	if math.Abs(float64(crossings)-2*hz) > 4 {
		t.Errorf("%d zero crossings, want about %v", crossings, 2*hz)
	}
}

// The engine goes away mid-reply (a reload, a dropped socket, or
// reply.cancelled connection_lost): the turn is sent again on the new
// session, and --out keeps exactly the reply that completed.
func TestScripted_ResendAfterLostConnection(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"disconnect-after=12", "disconnect-after=4", "cancel-lost"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, rec := filepath.Join(dir, "reply.wav"), filepath.Join(dir, "rec.jsonl")
			stdout, stderr, code := runDemo(t, "--engine", "sim", "--say", "Are you there?", "--out", out,
				"--record", rec, "--sim-faults", fault)
			testutil.Equal(t, "exit code", code, exitOK)
			testutil.Equal(t, "stdout", stdout, echo("Are you there?")+"\n")
			if !strings.Contains(stderr, "sending the turn again") {
				t.Error("stderr does not say the turn is sent again")
			}
			checkWAV(t, out, simSpeech())
			reqs := recorded(t, rec, "reply.request")
			testutil.Equal(t, "reply.request sent", len(reqs), 2)
			testutil.Equal(t, "same event", reqs[1]["eventId"], reqs[0]["eventId"])
			if reqs[0]["requestId"] == reqs[1]["requestId"] {
				t.Error("the resent turn reuses the lost request's requestId")
			}
		})
	}
}

func TestScripted_ExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	testutil.Success(t, os.WriteFile(bad, []byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":" "}}`), 0o644))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	t.Cleanup(func() { busy.Close() })
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"unknown flag", []string{"--bogus"}, exitUsage, []string{"rpengine-demo: unknown flag --bogus; run 'rpengine-demo --help' for usage\n"}},
		{"flag without value", []string{"--engine", "sim", "--say"}, exitUsage, []string{"flag needs a value: --say; run 'rpengine-demo --help'"}},
		{"bad flag value", []string{"--wait", "soon"}, exitUsage, []string{"-wait: parse error"}},
		{"bad engine", []string{"--engine", "browser", "--say", "hi"}, exitUsage, []string{"want real or sim"}},
		{"bad voice", []string{"--engine", "sim", "--voice", "X9", "--say", "hi"}, exitUsage, []string{"F1 F2"}},
		{"bad language", []string{"--engine", "sim", "--lang", "xx", "--say", "hi"}, exitUsage, []string{"--lang"}},
		{"scene without directive", []string{"--engine", "sim", "--scene", bad, "--say", "hi"}, exitUsage, []string{"go together"}},
		{"blank say", []string{"--engine", "sim", "--say", "  "}, exitUsage, []string{"blank"}},
		{"stray argument", []string{"--engine", "sim", "hello"}, exitUsage, []string{"--say"}},
		{"missing wav", []string{"--engine", "sim", "--wav", filepath.Join(dir, "none.wav")}, exitUsage, []string{"--wav", "; check the path"}},
		{"not a wav", []string{"--engine", "sim", "--wav", bad}, exitUsage, []string{"--wav", "; give a WAV file"}},
		{"out in a missing folder", []string{"--engine", "sim", "--say", "hi", "--out", filepath.Join(dir, "no", "x.wav")}, exitUsage,
			[]string{"--out", "; check the path"}},
		{"invalid card", []string{"--engine", "sim", "--card", bad, "--say", "hi"}, exitUsage,
			[]string{"/data/name: must not be blank", "edit those values in the card by hand, then run the demo again with --card FILE"}},
		{"missing card", []string{"--engine", "sim", "--card", filepath.Join(dir, "none.json"), "--say", "hi"}, exitUsage,
			[]string{"none.json: no such file or directory; check the path, then run the demo again with --card FILE"}},
		{"port in use", []string{"--port", busyPort, "--say", "hi"}, exitUsage,
			[]string{"port " + busyPort + " is already in use", "--port"}},
		{"engine error", []string{"--engine", "sim", "--say", "hi", "--sim-faults", "error=unsupported_voice"}, exitEngineError,
			[]string{"engine error unsupported_voice"}},
		{"engine error after accept", []string{"--engine", "sim", "--say", "hi", "--sim-faults", "error=request_failed,delay=1ms"},
			exitEngineError, []string{"engine error request_failed"}},
		{"cancelled by the engine", []string{"--engine", "sim", "--say", "hi", "--sim-faults", "cancel=service_stopped"},
			exitEngineError, []string{"reply cancelled by the engine: service_stopped"}},
		{"no engine", []string{"--port", "0", "--wait", "300ms", "--say", "hi"}, exitNoEngine,
			[]string{"rpengine.gemtavern.com/#port=", "no engine connected within --wait 300ms"}},
		{"engine never comes back", []string{"--engine", "sim", "--say", "hi", "--wait", "3s",
			"--sim-faults", "disconnect-after=6,gone"}, exitNoEngine, []string{"no engine connected within --wait"}},
		// A full queue is named only when the engine reports it; a slow
		// engine under load is not called full.
		{"queue full", []string{"--engine", "sim", "--say", "hi", "--wait", "300ms", "--sim-faults", "full"}, exitNoEngine,
			[]string{"the engine did not accept requests (queue full) within --wait 300ms"}},
		{"mailbox with a port", []string{"--mailbox", "mbox", "--port", "0", "--say", "hi"}, exitUsage,
			[]string{"--mailbox uses a folder"}},
		{"sim faults in real mode", []string{"--sim-faults", "gone", "--say", "hi"}, exitUsage, []string{"--engine sim"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runDemo(t, tc.args...)
			testutil.Equal(t, "exit code", code, tc.code)
			testutil.Equal(t, "stdout", stdout, "")
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			// Issue #18: a mistake is never a timestamped log line; a
			// command-line mistake is one line naming --help.
			if strings.Contains(stderr, "time=") || strings.Contains(stderr, "level=") {
				t.Errorf("a log line for a user's mistake:\n%s", stderr)
			}
			if strings.Contains(tc.name, "flag") && (strings.Count(stderr, "\n") != 1 ||
				!strings.HasSuffix(stderr, "; run 'rpengine-demo --help' for usage\n")) {
				t.Errorf("a flag mistake is not one line naming --help:\n%s", stderr)
			}
		})
	}
}

func TestScripted_Help(t *testing.T) {
	t.Parallel()
	// Issue #18: the usage goes to stdout, for -h and --help alike.
	var usage string
	for _, flag := range []string{"-h", "--help"} {
		stdout, stderr, code := runDemo(t, flag)
		testutil.Equal(t, "exit code", code, exitOK)
		testutil.Equal(t, "stderr", stderr, "")
		for _, want := range []string{"rpengine-demo --engine sim ", "Exit codes: 0 reply completed", "/help lists the commands"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("usage lacks %q", want)
			}
		}
		usage = stdout
	}
	stderr := usage // the checks below read the usage
	// Every flag is listed once, in its group; the hidden one is not.
	newFlagSet(&config{}).VisitAll(func(f *flag.Flag) {
		prefix := "\n  --" + f.Name
		if len(f.Name) == 1 {
			prefix = "\n  -" + f.Name
		}
		n := strings.Count(stderr, prefix+" ") + strings.Count(stderr, prefix+"\n")
		if f.Usage == "" { // hidden: for tests
			testutil.Equal(t, "listings of hidden "+f.Name, n, 0)
		} else {
			testutil.Equal(t, "listings of "+f.Name, n, 1)
		}
	})
	if strings.Contains(stderr, "Other:") {
		t.Error("a flag is missing from flagGroups")
	}
	for l := range strings.Lines(stderr) {
		if n := len([]rune(strings.TrimSuffix(l, "\n"))); n > 80 {
			t.Errorf("usage line of %d columns: %q", n, l)
		}
	}
}

// SIGINT during a reply cancels it on the engine (request.cancel), then
// exits 130 with nothing on stdout.
func TestScripted_Interrupt(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	d := startDemo(t, false, "--engine", "sim", "--say", "Tell me a long story", "--record", rec,
		"--sim-faults", "delay=100ms")
	d.waitStderr("sent as snapshot")
	d.interrupt()
	testutil.Equal(t, "exit code", d.exitCode(), exitInterrupted)
	testutil.Equal(t, "stdout", d.stdout.String(), "")
	if !strings.Contains(d.stderr.String(), "reply cancelled") {
		t.Errorf("stderr does not confirm the cancellation")
	}
	cancels := recorded(t, rec, "request.cancel")
	testutil.Equal(t, "request.cancel sent", len(cancels), 1)
	reqs := recorded(t, rec, "reply.request")
	testutil.Equal(t, "cancelled request", cancels[0]["requestId"], reqs[0]["requestId"])
	got := recorded(t, rec, "reply.cancelled")
	if len(got) != 1 || got[0]["reason"] != "requested_by_game" {
		t.Errorf("reply.cancelled received: %v", got)
	}
}

// SIGINT while waiting for the engine exits 130 at once, not 3 after
// --wait, and sends nothing.
func TestScripted_InterruptWhileWaiting(t *testing.T) {
	t.Parallel()
	d := startDemo(t, false, "--port", "0", "--say", "hi", "--wait", "1m", "--no-playback")
	d.waitStderr("waiting up to 1m0s for the engine to connect")
	d.interrupt()
	testutil.Equal(t, "exit code", d.exitCode(), exitInterrupted)
	testutil.Equal(t, "stdout", d.stdout.String(), "")
}

// A card whose numbers may hash differently in the engine is sent as a
// snapshot without targetHash, and the demo says why.
func TestScripted_UnsafeCard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, rec := filepath.Join(dir, "card.json"), filepath.Join(dir, "rec.jsonl")
	doc := bytes.Replace(builtinCard, []byte(`"extensions": {},`), []byte(`"extensions": {"weight": 1.5},`), 1)
	testutil.Success(t, os.WriteFile(file, doc, 0o644))
	stdout, stderr, code := runDemo(t, "--engine", "sim", "--card", file, "--say", "hi", "--record", rec)
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("hi")+"\n")
	if !strings.Contains(stderr, "1.5 at /data/extensions/weight") || !strings.Contains(stderr, "without targetHash") {
		t.Errorf("stderr does not explain the snapshot:\n%s", stderr)
	}
	c := recorded(t, rec, "reply.request")[0]["card"].(map[string]any)
	testutil.Equal(t, "mode", c["mode"], any("snapshot"))
	if _, ok := c["targetHash"]; ok {
		t.Error("targetHash sent for a card that is not hash-safe")
	}
}

// Issue #32: the card's greeting is shown with its macros replaced, in
// any case, by the character's name and the player's (--player, or the
// engine's "Player"); repairs are shown as card.Change formats them.
func TestScripted_Greeting(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "card.json")
	doc := bytes.Replace(builtinCard, []byte("*The door opens before you can knock.*"),
		[]byte("*{{char}} opens before {{User}} can knock; <bot> nods to <USER>.*"), 1)
	testutil.Success(t, os.WriteFile(file, doc, 0o644))
	for player, want := range map[string]string{"Sam": "greeting: *Wren opens before Sam can knock; Wren nods to Sam.* Storm's",
		"": "greeting: *Wren opens before Player can knock; Wren nods to Player.* Storm's"} {
		stdout, stderr, code := runDemo(t, "--engine", "sim", "--card", file, "--player", player, "--say", "hi", "--no-playback")
		testutil.Equal(t, "exit code", code, exitOK)
		testutil.Equal(t, "stdout", stdout, echo("hi")+"\n")
		if !strings.Contains(stderr, want) {
			t.Errorf("--player %q: stderr lacks %q:\n%s", player, want, stderr)
		}
	}
	_, stderr, code := runDemo(t, "--engine", "sim", "--card", "../../testdata/cards/v1.json", "--say", "hi", "--no-playback")
	testutil.Equal(t, "exit code", code, exitOK)
	if !strings.Contains(stderr, "rpengine-demo:   (root): upgraded a V1 card") || !strings.Contains(stderr, `greeting: "Mind the nets."`) {
		t.Errorf("the V1 card's repair or greeting is not shown:\n%s", stderr)
	}
}

func TestScripted_SceneAndDirective(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scene, directive, rec := filepath.Join(dir, "scene.json"), filepath.Join(dir, "directive.json"), filepath.Join(dir, "rec.jsonl")
	testutil.Success(t, os.WriteFile(scene, []byte(`{"kind":"location","family":"island","label":"Gull Rock",
		"sceneLine":"A storm gathers over the lighthouse.","priority":0.5}`), 0o644))
	testutil.Success(t, os.WriteFile(directive, []byte(`{"protocolVersion":1,"sceneContext":"Night, heavy rain.",
		"autoEventGuide":"React to the weather.","directUserGuide":"Answer the visitor."}`), 0o644))
	stdout, _, code := runDemo(t, "--engine", "sim", "--say", "hi", "--scene", scene, "--directive", directive,
		"--record", rec, "--text-only")
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("hi")+"\n")
	req := recorded(t, rec, "reply.request")[0]
	testutil.Equal(t, "interactionMode", req["interactionMode"], any("direct_user"))
	testutil.Equal(t, "sceneLine", req["promptScene"].(map[string]any)["sceneLine"], any("A storm gathers over the lighthouse."))
	testutil.Equal(t, "sceneContext", req["promptDirective"].(map[string]any)["sceneContext"], any("Night, heavy rain."))

	// A field the protocol does not have is a mistake in the file.
	testutil.Success(t, os.WriteFile(scene, []byte(`{"kind":"location","colour":"grey"}`), 0o644))
	_, stderr, code := runDemo(t, "--engine", "sim", "--say", "hi", "--scene", scene, "--directive", directive)
	testutil.Equal(t, "exit code", code, exitUsage)
	if !strings.Contains(stderr, `unknown field "colour"`) {
		t.Errorf("stderr does not name the bad field:\n%s", stderr)
	}
}

// --dev-origin lets a local build of the RPEngine page (origin
// http://127.0.0.1:5173) connect; without it that origin is refused.
func TestScripted_DevOrigin(t *testing.T) {
	t.Parallel()
	for _, dev := range []bool{true, false} {
		t.Run("dev="+strconv.FormatBool(dev), func(t *testing.T) {
			t.Parallel()
			args := []string{"--port", "0", "--say", "hi", "--wait", "3s", "--no-playback"}
			if dev {
				args = append(args, "--dev-origin")
			}
			d := startDemo(t, false, args...)
			url := "ws://127.0.0.1:" + strconv.Itoa(d.port()) + "/rp-engine/socket"
			eng, err := enginetest.Dial(ctxT(t), url, &enginetest.Options{Origin: "http://127.0.0.1:5173"})
			if !dev {
				testutil.Error(t, err)
				testutil.Equal(t, "exit code", d.exitCode(), exitNoEngine)
				return
			}
			testutil.Success(t, err)
			defer eng.Close()
			testutil.Equal(t, "exit code", d.exitCode(), exitOK)
			testutil.Equal(t, "stdout", d.stdout.String(), echo("hi")+"\n")
		})
	}
}

// pngWithCard returns a minimal PNG holding doc in a tEXt chunk named
// "chara", as character card tools export it.
func pngWithCard(doc []byte) []byte {
	chunk := func(typ string, data []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		b = append(b, typ...)
		b = append(b, data...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
	}
	ihdr := []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0} // 1x1 greyscale
	text := append([]byte("chara\x00"), base64.StdEncoding.EncodeToString(doc)...)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	out = append(out, chunk("tEXt", text)...)
	return append(out, chunk("IEND", nil)...)
}

// A PNG card is read from its tEXt chunk; the record holds every envelope
// in and out with a timestamp; -v shows debug logs.
func TestScripted_PNGCardRecordVerbose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, rec := filepath.Join(dir, "wren.png"), filepath.Join(dir, "rec.jsonl")
	testutil.Success(t, os.WriteFile(file, pngWithCard(builtinCard), 0o644))
	stdout, stderr, code := runDemo(t, "--engine", "sim", "--card", file, "--say", "hi", "--record", rec, "-v",
		"--character-id", "keeper")
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("hi")+"\n")
	if !strings.Contains(stderr, `card "Wren" sent as snapshot`) || !strings.Contains(stderr, "level=DEBUG") {
		t.Errorf("stderr lacks the card transfer or debug logs:\n%s", stderr)
	}
	for typ, dir := range map[string]string{"hello": "in", "welcome": "out", "reply.request": "out",
		"reply.accepted": "in", "reply.audio.chunk": "in", "reply.completed": "in"} {
		msgs := recorded(t, rec, typ)
		if len(msgs) == 0 || msgs[0]["_dir"] != dir {
			t.Errorf("record holds no %s %s", dir, typ)
		}
	}
	req := recorded(t, rec, "reply.request")[0]
	testutil.Equal(t, "characterId", req["characterId"], any("keeper"))
	testutil.Equal(t, "integrationId", req["integrationId"], any("rpengine-demo"))
}

// The engine's connection ends in the middle of a reply, because a second
// engine (a stray tab, a reloaded page) supersedes it or because the server
// closes it for a protocol violation: the turn is sent again to the engine
// that connects next.
func TestScripted_ConnectionReplaced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		breaks bool   // the first engine breaks the protocol before the second dials
		stderr string // what the demo says
	}{
		{"superseded", false, "superseded"},
		{"protocol violation", true, "the engine went away before the reply ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, false, "--port", "0", "--say", "Who is there?", "--wait", "20s", "--no-playback")
			url := "ws://127.0.0.1:" + strconv.Itoa(d.port()) + "/rp-engine/socket"
			ctx := ctxT(t)
			first, err := enginetest.Dial(ctx, url, &enginetest.Options{Faults: enginetest.Faults{Delay: 100 * time.Millisecond}})
			testutil.Success(t, err)
			defer first.Close()
			_, err = first.WaitType(ctx, "reply.request")
			testutil.Success(t, err)
			if tc.breaks {
				testutil.Success(t, first.SendRaw(ctx, []byte("\xff not UTF-8")))
				d.waitStderr(tc.stderr)
			}
			second, err := enginetest.Dial(ctx, url, nil)
			testutil.Success(t, err)
			defer second.Close()
			testutil.Equal(t, "exit code", d.exitCode(), exitOK)
			testutil.Equal(t, "stdout", d.stdout.String(), echo("Who is there?")+"\n")
			if _, err := second.WaitType(ctx, "reply.request"); err != nil {
				t.Errorf("the turn was not sent again to the new engine: %v", err)
			}
			if !strings.Contains(d.stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, d.stderr.String())
			}
		})
	}
}

func TestScripted_WavTooLong(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "long.wav")
	writeTone(t, in, 8000, 31, 440, 0.5)
	_, stderr, code := runDemo(t, "--engine", "sim", "--wav", in)
	testutil.Equal(t, "exit code", code, exitUsage)
	if !strings.Contains(stderr, "at most 30 s") {
		t.Errorf("stderr does not give the limit:\n%s", stderr)
	}
}

// A --record file that cannot be written (a full disk) is reported, not
// silently left incomplete; the turn itself still completes.
func TestScripted_RecordWriteFails(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	stdout, stderr, code := runDemo(t, "--engine", "sim", "--say", "hi", "--text-only", "--record", "/dev/full")
	testutil.Equal(t, "exit code", code, exitOK)
	testutil.Equal(t, "stdout", stdout, echo("hi")+"\n")
	if !strings.Contains(stderr, "--record /dev/full: ") || !strings.Contains(stderr, "the record is incomplete") {
		t.Errorf("stderr does not report the failed record:\n%s", stderr)
	}
}
