package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hajimehoshi/ebiten/v2/text/v2"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/gamelink-go/gamelink/examples/ebiten-tavern/internal/flags"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

func TestLoadCharacter_Builtin(t *testing.T) {
	ch, err := loadCharacter("")
	if err != nil {
		t.Fatal(err)
	}
	if ch.card.Name() != "Maren" || ch.id != "maren" {
		t.Errorf("name %q id %q, want Maren and maren", ch.card.Name(), ch.id)
	}
	if ch.portrait != nil {
		t.Error("the built-in card has a portrait; the scene should draw one")
	}
}

// A PNG card's image is the portrait, and its tEXt chunk the card.
func TestLoadCharacter_PNGPortrait(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 40, 60))
	img.Set(3, 4, color.NRGBA{200, 10, 10, 255})
	data := pngCard(t, img, strings.Replace(string(marenCard), `"Maren"`, `"Old Tom"`, 1))
	ch, err := parseCharacter(data, "tom.png")
	if err != nil {
		t.Fatal(err)
	}
	if ch.card.Name() != "Old Tom" || ch.id != "old-tom" {
		t.Errorf("name %q id %q, want Old Tom and old-tom", ch.card.Name(), ch.id)
	}
	if ch.portrait == nil || ch.portrait.Bounds() != img.Bounds() {
		t.Fatalf("portrait %v, want the card's 40x60 image", ch.portrait)
	}
	if r, _, _, _ := ch.portrait.At(3, 4).RGBA(); r>>8 != 200 {
		t.Errorf("portrait pixel red %d, want 200", r>>8)
	}
}

// Issue #32: the greeting is the card's first message with its macros
// replaced, in any case, as SillyTavern shows it.
func TestLoadCharacter_Greeting(t *testing.T) {
	doc := strings.Replace(string(marenCard), "*Maren sets down the mug she is drying.*", "*{{Char}} hands <bot>'s mug to {{user}}, <USER>.*", 1)
	ch, err := parseCharacter([]byte(doc), "maren.json")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Equal(t, "greeting", ch.greeting, "*Maren hands Maren's mug to traveller, traveller.* "+
		"Shut the door behind you, the rain's coming in sideways. What'll it be, stranger? Ale, stew, or news?")
}

func TestLoadCharacter_Errors(t *testing.T) {
	for name, data := range map[string][]byte{
		"not JSON":     []byte("{"),
		"invalid card": []byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{}}`),
		"PNG, no card": pngCard(t, image.NewNRGBA(image.Rect(0, 0, 2, 2)), ""),
	} {
		if _, err := parseCharacter(data, "bad.card"); err == nil || !strings.Contains(err.Error(), "bad.card") {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
}

// Issue #18: a card loads as players download it (V1, V3, a SillyTavern
// export whose lorebook lacks its extensions), as JSON and inside a PNG,
// repaired on load, and what is sent is a valid card; so do the real
// exports in the shared folder.
func TestLoadCharacter_AsExported(t *testing.T) {
	check := func(t *testing.T, files []string, repaired bool) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range [][]byte{data, pngCard(t, image.NewNRGBA(image.Rect(0, 0, 2, 2)), string(data))} {
				ch, err := parseCharacter(in, f)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if err := ch.card.Validate(); err != nil {
					t.Fatalf("%s: the card sent is invalid: %v", f, err)
				}
				if repaired && len(ch.repairs) == 0 {
					t.Errorf("%s: loaded with no repair noted", f)
				}
			}
		}
	}
	check(t, []string{"../../testdata/cards/v1.json", "../../testdata/cards/broken-v3.json", "../../testdata/cards/broken-book-extensions.json"}, true)
	t.Run("shared", func(t *testing.T) {
		shared, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t, "cards"), "*.json"))
		check(t, shared, false)
	})
}

// Issue #18: names without ASCII letters get ids of their own, the same
// on every run, never the one shared fallback.
func TestCharacterID(t *testing.T) {
	for name, want := range map[string]string{"Maren": "maren", "Old Tom": "old-tom", " ": "character"} {
		if got := characterID(name); got != want {
			t.Errorf("characterID(%q) = %q, want %q", name, got, want)
		}
	}
	a, b := characterID("电影世界穿梭者"), characterID("小汤圆")
	if a == b || a == "character" || !strings.HasPrefix(a, "character-") || a != characterID("电影世界穿梭者") {
		t.Errorf("CJK names: %q and %q, want distinct, stable ids", a, b)
	}
	if got := characterID("Zoë"); !strings.HasPrefix(got, "zo-") || got == characterID("Zoé") {
		t.Errorf("characterID(Zoë) = %q, want zo- and a hash of its own", got)
	}
}

func TestParseFlags(t *testing.T) {
	c, err := flags.Parse([]string{"--engine", "sim"}, io.Discard)
	if err != nil || c.Port != 0 {
		t.Fatalf("--engine sim: port %v, err %v; want a free port (0)", c, err)
	}
	c, err = flags.Parse(nil, io.Discard)
	if err != nil || c.Engine != "real" || c.Port != rpengine.DefaultPort {
		t.Fatalf("defaults: %+v, %v; want the real engine on %d", c, err, rpengine.DefaultPort)
	}
	for _, args := range [][]string{
		{"--engine", "fake"},
		{"--exit-after-reply"},
		{"--mailbox", "x", "--port", "5000"},
		{"--wait", "0s"},
		{"--voice", "Z9"},
		{"hello"},
		{"--inspect", "0.0.0.0:0"}, // Issue #36: loopback only
		{"--inspect", ":6060"},
		{"--inspect", "127.0.0.1"},
	} {
		var out bytes.Buffer
		if _, err := flags.Parse(args, &out); err == nil || out.Len() > 0 {
			t.Errorf("%q: error %v, usage %q; want an error and no usage", args, err, out.String())
		}
	}
	// The usage goes to stdout, for a mistake only the error. Issue #32:
	// flags as --name, as every command of the repository shows them.
	var out bytes.Buffer
	if _, err := flags.Parse([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(out.String(), "\n  --engine MODE\n") || !strings.Contains(out.String(), "2 usage error") {
		t.Errorf("--help: %v, usage %q", err, out.String())
	}
	if regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+`).MatchString(out.String()) {
		t.Errorf("the usage shows a flag with one dash:\n%s", out.String())
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:6060", "[::1]:0"} {
		if c, err := flags.Parse([]string{"--inspect", addr}, io.Discard); err != nil || c.Inspect != addr {
			t.Errorf("--inspect %s: %+v, %v", addr, c, err)
		}
	}
	if _, err := flags.Parse([]string{"--bogus"}, io.Discard); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("--bogus: %v, want it named", err)
	}
}

// Issue #32: the simulated engine answers as the loaded card's character.
func TestSimReply_theCardsCharacter(t *testing.T) {
	ch, err := parseCharacter([]byte(strings.Replace(string(marenCard), `"Maren"`, `"Gloria"`, 1)), "gloria.json")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(simReply(ch, enginetest.Request{Text: " Hi "}).Sentences, " ")
	testutil.Equal(t, "reply", got, "Gloria hears you. You said: Hi")
}

// Issue #32: a greeting too long for the box shows its start, a reply
// streaming in its newest words.
func TestFit(t *testing.T) {
	lines := []string{"one", "two", "three", "four"}
	testutil.Equal(t, "greeting", fit(lines, 2, true), []string{"one", "two …"})
	testutil.Equal(t, "reply", fit(lines, 2, false), []string{"three", "four"})
	testutil.Equal(t, "room for all", fit(lines, 4, true), lines)
	testutil.Equal(t, "lines kept", lines[1], "two")
}

// tavern is the game without its window: the server, an engine, and the
// Mixer and Speaker the game hands to Ebitengine.
type tavern struct {
	ch  *character
	k   *link
	eng *enginetest.Engine // nil without faults
	mix *audio.Mixer
	sp  *audio.Speaker

	mouthMax float32 // the widest the mouth opened while play read the mixer
}

// newTavern starts the server and, unless faults is nil, dials the
// simulated engine with those faults into it.
func newTavern(t *testing.T, faults *enginetest.Faults) *tavern {
	t.Helper()
	ch, err := loadCharacter("")
	if err != nil {
		t.Fatal(err)
	}
	k, err := openLink(0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.close)
	var eng *enginetest.Engine
	if faults != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		eng, err = enginetest.Dial(ctx, k.socketURL(), &enginetest.Options{Responder: func(r enginetest.Request) enginetest.Script { return simReply(ch, r) }, SecondsPerSentence: 1.2, Faults: *faults})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
	}
	mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: sampleRate, Latency: audioBuffer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mix.Close() })
	sp, err := mix.NewSpeaker(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &tavern{ch: ch, k: k, eng: eng, mix: mix, sp: sp}
}

// play reads the mixer, as Ebitengine's player would, until the turn has
// ended and its speech has been heard, or until 30 s have passed.
func (tv *tavern) play(t *testing.T, tr *turn) turnState {
	t.Helper()
	buf := make([]byte, 4*sampleRate/100) // 10 ms a read
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := tr.state()
		if pos, _ := tv.sp.Heard(st.Reply); st.Ended && (st.Samples == 0 || pos.Done || pos.Interrupted) {
			<-tr.done
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end and play within 30 s: %+v", st)
		}
		if _, err := tv.mix.Read(buf); err != nil {
			t.Fatal(err)
		}
		tv.mouthMax = max(tv.mouthMax, tv.sp.Mouth()) // what the scene draws each frame
		if !st.Ended {
			time.Sleep(time.Millisecond) // let the engine talk
		}
	}
}

var testSay = sayOptions{voice: "F2", lang: "en"}

// The game's turn, end to end without a window: the simulated engine
// answers over loopback, the speech goes through the Mixer the game hands
// to Ebitengine, and every sample of the reply is delivered.
func TestTurn_SpeechThroughMixer(t *testing.T) {
	tv := newTavern(t, &enginetest.Faults{})
	st := tv.play(t, tv.k.say(tv.ch, "Hello there", nil, testSay, tv.sp))
	if st.Err != nil || !strings.Contains(st.Text, "You said: Hello there") {
		t.Fatalf("turn %+v, want the echo and no error", st)
	}
	// Issue #32: the engine's {{user}} is the greeting's.
	for _, m := range tv.eng.Received() {
		var req struct{ Player struct{ DisplayName string } }
		if m.Type == "reply.request" && (json.Unmarshal(m.Raw, &req) != nil || req.Player.DisplayName != playerName) {
			t.Errorf("the request names the player %q, want %q", req.Player.DisplayName, playerName)
		}
	}
	// Two sentences of 1.2 s at 44.1 kHz, as the simulated engine speaks.
	if st.Rate != 44100 || st.Samples != 2*52920 {
		t.Errorf("received %d samples at %d Hz, want 105840 at 44100", st.Samples, st.Rate)
	}
	pos, _ := tv.sp.Heard(st.Reply)
	if heard := int(pos.Heard.Seconds() * float64(st.Rate)); heard < st.Samples || pos.Interrupted || !pos.Done {
		t.Errorf("heard %v (%d samples), done %v, interrupted %v; want all %d", pos.Heard, heard, pos.Done, pos.Interrupted, st.Samples)
	}
	// Her mouth follows the speech as it is heard: open while she speaks,
	// closing (the envelope's release) once it has all been heard.
	buf := make([]byte, 4*sampleRate/100)
	for range 30 { // 300 ms more of the game's frames
		if _, err := tv.mix.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if tv.mouthMax < 0.2 || tv.sp.Mouth() > 0.01 {
		t.Errorf("the mouth opened at most %.2f and is %.2f 300 ms after the speech; want it to move with the speech, then shut",
			tv.mouthMax, tv.sp.Mouth())
	}
}

// Push to talk sends the recording as the event's speech: 16 kHz mono
// 16-bit, which the engine accepts.
func TestTurn_RecordedSpeech(t *testing.T) {
	tv := newTavern(t, &enginetest.Faults{})
	speech := make([]int16, audio.CaptureRate) // one second
	for i := range speech {
		speech[i] = int16(3000 * math.Sin(float64(i)/8))
	}
	st := tv.play(t, tv.k.say(tv.ch, "", speech, testSay, tv.sp))
	if st.Err != nil || !strings.Contains(st.Text, "your recorded voice") {
		t.Fatalf("turn %+v, want the engine to have heard speech", st)
	}
}

// Esc in the middle of a reply silences the speech at once: nothing of it
// is enqueued afterwards, even when the engine finishes the reply anyway
// (a cancellation that races the reply's completion).
func TestTurn_Interrupt(t *testing.T) {
	tv := newTavern(t, &enginetest.Faults{Delay: 30 * time.Millisecond, IgnoreCancel: true})
	tr := tv.k.say(tv.ch, "Tell me a long story", nil, testSay, tv.sp)
	deadline := time.Now().Add(20 * time.Second)
	for tr.state().Samples == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no speech within 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	tr.interrupt(tv.sp)
	st := tv.play(t, tr)
	if st.Samples != 2*52920 {
		t.Errorf("received %d samples, want the whole reply (105840): the engine ignored the cancellation", st.Samples)
	}
	// Nothing was read from the mixer before the interruption, so nothing
	// of the reply may be heard after it but the fade.
	if pos, _ := tv.sp.Heard(st.Reply); pos.Done || pos.Heard > 10*time.Millisecond {
		t.Errorf("heard %v of the reply (done %v), want nothing after the interruption", pos.Heard, pos.Done)
	}
}

// An engine error ends the turn with the engine's code, for the scene.
func TestTurn_EngineError(t *testing.T) {
	tv := newTavern(t, &enginetest.Faults{ErrorCode: "unsupported_voice"})
	st := tv.play(t, tv.k.say(tv.ch, "Hello", nil, testSay, tv.sp))
	if got := describe(st.Err); !strings.Contains(got, "unsupported_voice") {
		t.Errorf("the scene would say %q, want the engine's code", got)
	}
}

// Esc while waiting for an engine ends the turn at once; the scene shows
// the address to open meanwhile.
func TestTurn_InterruptWhileWaiting(t *testing.T) {
	tv := newTavern(t, nil)
	tr := tv.k.say(tv.ch, "anyone?", nil, testSay, tv.sp)
	if s := tv.k.state(); s.Connected || !strings.Contains(s.OpenURL, "#port=") {
		t.Errorf("state %+v, want waiting, with the address to open", s)
	}
	tr.interrupt(tv.sp)
	select {
	case <-tr.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the turn did not end")
	}
	if st := tr.state(); !st.Ended || describe(st.Err) != "You interrupted." {
		t.Errorf("turn %+v (%v), want ended by the player", st, st.Err)
	}
}

// The scene's state follows the engine: connected, with its queue.
func TestLinkState_Connected(t *testing.T) {
	tv := newTavern(t, &enginetest.Faults{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := tv.k.state()
		if s.Connected && s.QueueKnown {
			if s.QueueLimit != 20 || !s.Accepting {
				t.Errorf("state %+v, want queue 0/20 accepting", s)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %+v after 10 s, want connected with a known queue", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWrap(t *testing.T) {
	face := &text.GoTextFace{Source: mustFont(goregular.TTF), Size: 17}
	lines := wrap(strings.Repeat("ale and stew ", 40), face, 300)
	if len(lines) < 5 {
		t.Fatalf("%d lines, want the text wrapped", len(lines))
	}
	for _, l := range lines {
		if w := text.Advance(l, face); w > 300 {
			t.Errorf("line %q is %.0f px wide, over 300", l, w)
		}
	}
	long := strings.Repeat("x", 200) // a word wider than a line
	lines = wrap("a "+long+" b", face, 300)
	if got := strings.ReplaceAll(strings.Join(lines, ""), " ", ""); got != "a"+long+"b" {
		t.Errorf("wrapped %q, lost or added characters", lines)
	}
	for _, l := range lines {
		if w := text.Advance(l, face); w > 300 {
			t.Errorf("line %q is %.0f px wide, over 300", l, w)
		}
	}
}

// pngCard returns a PNG of img carrying cardJSON in a tEXt chunk named
// chara, as card tools write it ("" writes no card).
func pngCard(t *testing.T, img image.Image, cardJSON string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if cardJSON == "" {
		return b.Bytes()
	}
	data := b.Bytes()
	iend := bytes.LastIndex(data, []byte("IEND")) - 4
	payload := append([]byte("chara\x00"), base64.StdEncoding.EncodeToString([]byte(cardJSON))...)
	var chunk []byte
	chunk = binary.BigEndian.AppendUint32(chunk, uint32(len(payload)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, payload...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return append(append(append([]byte(nil), data[:iend]...), chunk...), data[iend:]...)
}
