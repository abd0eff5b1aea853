package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// scripted runs one turn: stdout gets only the reply's final display text
// and a newline; the exit code says how it went.
func (a *app) scripted() int {
	o := a.turn(a.request(a.cfg.say, a.speech), false)
	if o.err != nil || o.interrupted {
		return o.code
	}
	a.con.Text(o.text + "\n")
	a.drain()
	return exitOK
}

// maxQueuedLines bounds the lines read ahead of the engine; beyond it the
// reader waits (stdin backpressure), so no line is ever dropped.
const maxQueuedLines = 256

// interactive reads events line by line until EOF or Ctrl-C. Lines read
// before the engine is ready, or while a reply is in flight, are queued
// and sent in order; EOF quits once they have all been answered.
func (a *app) interactive() int {
	a.lines = make(chan string, maxQueuedLines)
	a.readerEnd = make(chan struct{})
	defer close(a.readerEnd)
	if ed := newEditor(a.stdin, a.stdout, a.ctrlC); ed != nil {
		a.con.useEditor(ed)
		a.onClose(func() {
			a.con.EndText() // a reply line cut short is still shown
			ed.Close()
		})
		go a.editLines(ed)
	} else {
		go a.readLines()
	}
	a.con.Printf("rpengine-demo: type a line and press Enter to talk to %s; /help lists commands; Ctrl-D (EOF) quits",
		a.card.card.Name())
	for {
		a.con.Status(a.statusLine())
		line, ok, code := a.nextLine()
		if code != exitOK {
			return code
		}
		if !ok {
			break
		}
		line = strings.TrimSpace(a.clean(line))
		var o outcome
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "/"):
			var done bool
			if o, done = a.command(line); done {
				return o.code
			}
		default:
			o = a.turn(a.request(line, nil), true)
		}
		if o.quit || o.code == exitNoEngine {
			return o.code
		}
	}
	a.con.EndText()
	a.drain()
	return exitOK
}

// readLines feeds stdin's lines to a.lines and closes it at EOF.
func (a *app) readLines() {
	defer close(a.lines)
	sc := bufio.NewScanner(a.stdin)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		select {
		case a.lines <- sc.Text():
		case <-a.readerEnd:
			return
		}
	}
	if err := sc.Err(); err != nil {
		a.con.Printf("rpengine-demo: reading input: %v", err)
	}
}

// editLines feeds the lines typed on a terminal, through the line
// editor, to a.lines and closes it at Ctrl-D on an empty line or EOF.
func (a *app) editLines(ed *editor) {
	defer close(a.lines)
	for {
		line, dropped, err := ed.ReadLine()
		if dropped > 0 {
			a.con.Printf("rpengine-demo: the line was longer than %d MiB; %d bytes past that were dropped", maxLineBytes>>20, dropped)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				a.con.Printf("rpengine-demo: reading input: %v", err)
			}
			return
		}
		select {
		case a.lines <- line:
		case <-a.readerEnd:
			return
		}
	}
}

// clean removes control characters and terminal escape sequences from a
// line (a tab becomes a space), and says so when it removed any: they
// are never sent to the engine.
func (a *app) clean(line string) string {
	out, n := cleanLine(line)
	if n > 0 {
		a.con.Printf("rpengine-demo: removed %s from the line (terminal keys and control codes are not sent)",
			plural(n, "control character"))
	}
	return out
}

// cleanLine returns s without C0 and C1 control characters and without
// the escape sequences terminals send for keys (ESC [ ... final byte,
// ESC O x, ESC x), with tabs as spaces, and the number of characters
// removed.
func cleanLine(s string) (string, int) {
	var b strings.Builder
	removed := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case r == 0x1b:
			j := i + 1
			switch {
			case j < len(rs) && rs[j] == '[': // CSI: parameters, then a final byte
				j++
				for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
					j++
				}
				j++
			case j < len(rs) && rs[j] == 'O': // SS3: one more character
				j += 2
			case j < len(rs):
				j++
			}
			j = min(j, len(rs))
			removed += j - i
			i = j - 1
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			removed++
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), removed
}

// ctrlC is Ctrl-C typed at an empty line of the line editor, delivered
// with the signals: it cancels a reply or a wait for the engine, as
// SIGINT does, but at the prompt it quits only when pressed twice in a
// row, as in a shell (Issue #32). again says the key before it was Ctrl-C
// too.
type ctrlC struct{ again bool }

func (ctrlC) String() string { return "Ctrl-C" }
func (ctrlC) Signal()        {}

// ctrlC is the editor's interrupt function; it is called on the editor's
// goroutine and never blocks.
func (a *app) ctrlC(again bool) {
	select {
	case a.sigs <- ctrlC{again}:
	default: // two are waiting already
	}
}

// nextLine returns the next input line; ok is false at EOF. SIGINT, a
// second Ctrl-C in a row at the prompt, SIGTERM or the server stopping
// with an error (already shown) returns the exit code instead.
func (a *app) nextLine() (line string, ok bool, code int) {
	if len(a.pending) > 0 {
		line, a.pending = a.pending[0], a.pending[1:]
		return line, true, exitOK
	}
	armed := false // the last key was a Ctrl-C at this prompt
	for {
		select {
		case line, ok = <-a.lines:
			return line, ok, exitOK
		case sig := <-a.sigs:
			if terminated(sig) {
				a.con.Printf("rpengine-demo: terminated (SIGTERM)")
				return "", false, exitTerminated
			}
			if k, key := sig.(ctrlC); key && !(k.again && armed) {
				armed = true
				a.con.Printf("rpengine-demo: Ctrl-C again quits (or Ctrl-D)")
				continue
			}
			a.con.Printf("rpengine-demo: interrupted")
			return "", false, exitInterrupted
		case <-a.serving.Done():
			return "", false, exitUsage
		}
	}
}

func (a *app) statusLine() string {
	var parts []string
	if _, live := a.srv.Session(); live {
		parts = append(parts, "connected")
	} else {
		parts = append(parts, "waiting for engine")
	}
	// No engine queue: the status is drawn between turns, when the engine
	// holds none of ours, and its last count may not have come yet (it
	// showed 1/20 at rest; Issue #32).
	if n := len(a.lines) + len(a.pending); n > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) queued", n))
	}
	if a.player != nil && a.player.Stats().Queued > 0 {
		parts = append(parts, "speaking")
	}
	voice := a.voice
	if a.textOnly {
		voice = "text only"
	}
	parts = append(parts, voice, a.lang)
	return strings.Join(parts, " · ")
}

const help = `commands:
  /mic            push to talk through this computer's microphone (Enter stops and sends)
  /browser-mic    speak through the RPEngine page's microphone (Enter stops)
  /card FILE      switch to (or reload an edited) card; shows how it was sent
  /voice F1..M5   change the speaking voice
  /lang CODE      change the reply language (en, ko, es, fr, de, ja, zh, ...)
  /text-only      toggle speech off and on
  /help           this list
  /quit           leave (as Ctrl-D at an empty prompt)
Ctrl-C clears the line being typed, cancels the reply, and at an empty
prompt quits when pressed twice.`

// command runs a slash command; done reports that the demo must exit with
// o.code.
func (a *app) command(line string) (o outcome, done bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help", "/?":
		a.con.Printf("%s", help)
	case "/quit", "/exit":
		a.drain()
		return outcome{code: exitOK}, true
	case "/voice":
		v := strings.ToUpper(arg)
		if !slices.Contains(voices, v) {
			a.con.Printf("rpengine-demo: /voice %q: want one of %s", arg, strings.Join(voices, " "))
			break
		}
		a.voice, a.textOnly = v, false
		a.con.Printf("rpengine-demo: voice %s", v)
		a.openPlayback()
	case "/lang":
		if !slices.Contains(languages, arg) {
			a.con.Printf("rpengine-demo: /lang %q: want one of %s", arg, strings.Join(languages, " "))
			break
		}
		a.lang = arg
		a.con.Printf("rpengine-demo: replies in %s", arg)
	case "/text-only":
		a.textOnly = !a.textOnly
		a.con.Printf("rpengine-demo: text only: %v", a.textOnly)
		a.openPlayback()
	case "/card":
		a.switchCard(arg)
	case "/mic":
		o = a.mic()
	case "/browser-mic":
		o = a.browserMic()
	default:
		a.con.Printf("rpengine-demo: unknown command %s; /help lists them", name)
	}
	return o, o.quit
}

// switchCard loads a card and, with an engine connected, syncs it at once
// so the transfer mode (snapshot, patch, reference) can be shown.
func (a *app) switchCard(file string) {
	if file == "" {
		a.con.Printf("rpengine-demo: /card FILE: which file?")
		return
	}
	lc, err := loadCard(file, "load it again with /card FILE")
	if err != nil {
		a.con.Printf("rpengine-demo: %v", err)
		return
	}
	a.card = lc
	name := lc.card.Name()
	a.cardName.Store(&name)
	if a.cfg.characterID == "" {
		a.charID = characterID(lc.card.Name())
	}
	a.con.Printf("rpengine-demo: now talking to %q (card %s, id %s)", lc.card.Name(), lc.source, a.charID)
	a.cardNotes(lc)
	if _, live := a.srv.Session(); !live {
		a.con.Printf("rpengine-demo: the card goes with the next turn")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	h, err := a.srv.SyncCharacter(ctx, a.cfg.integrationID, a.charID, lc.card)
	if err != nil {
		a.con.Printf("rpengine-demo: card sync: %v", err)
		return
	}
	a.tap.said()
	a.con.Printf("rpengine-demo: the engine holds the card as %s", h)
}

// mic records push-to-talk speech through this computer's microphone and
// sends it as the event.
func (a *app) mic() outcome {
	if !a.openMic() {
		return outcome{}
	}
	if err := a.recorder.Start(); err != nil {
		a.con.Printf("rpengine-demo: microphone: %v", err)
		return outcome{}
	}
	if send, code := a.recordSpeech(); !send {
		return outcome{quit: code != exitOK, code: code}
	}
	c, err := a.recorder.Stop()
	if err != nil {
		a.con.Printf("rpengine-demo: microphone: %v", err)
		if c == nil || errors.Is(err, audio.ErrSilentInput) {
			return outcome{}
		}
	}
	a.con.Printf("rpengine-demo: sending %.1fs of speech", c.Duration().Seconds())
	sp := &speech{samples: c.Samples} // the Recording is what the engine takes
	if speechLanguage(a.lang) {
		sp.lang = a.lang
	}
	return a.turn(a.request("", sp), true)
}

// openMic opens the microphone the first time, and reports whether there
// is one (a missing one is said once).
func (a *app) openMic() bool {
	if a.recorder != nil {
		return true
	}
	if a.noMic {
		a.con.Printf("rpengine-demo: no microphone; /browser-mic uses the RPEngine page's")
		return false
	}
	var err error
	a.recorder, err = audio.OpenRecorder(nil)
	if err != nil {
		a.recorder, a.noMic = nil, true
		a.log.Debug("rpengine-demo: no microphone", "err", err)
		a.con.Printf("rpengine-demo: no microphone (%s); /browser-mic uses the RPEngine page's", deviceReason(err))
		return false
	}
	return true
}

// recordSpeech shows the level until Enter (or EOF) or the 30 s limit,
// and reports whether to send; Ctrl-C discards the recording, SIGTERM
// also quits (code exitTerminated).
func (a *app) recordSpeech() (send bool, code int) {
	a.con.Printf("rpengine-demo: recording: speak, then press Enter to send (Ctrl-C discards)")
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l := a.recorder.Level()
			a.con.Meter(fmt.Sprintf("mic %5.1fs [%s]", l.Seconds, meter(float64(l.RMS)*3)))
		case <-a.recorder.Limit():
			a.con.Printf("rpengine-demo: 30 s reached: sending")
			return true, exitOK
		case line, ok := <-a.lines:
			if ok && strings.TrimSpace(line) != "" {
				a.pending = append(a.pending, line)
			}
			return true, exitOK
		case sig := <-a.sigs:
			_, _ = a.recorder.Stop()
			if terminated(sig) {
				a.con.Printf("rpengine-demo: terminated (SIGTERM): recording discarded")
				return false, exitTerminated
			}
			a.con.Printf("rpengine-demo: recording discarded")
			return false, exitOK
		}
	}
}

// browserMic captures speech through the RPEngine page's microphone, with
// its level and state, and streams the reply.
func (a *app) browserMic() outcome {
	req := a.request("", nil)
	cr := rpengine.CaptureRequest{IntegrationID: req.IntegrationID, CharacterID: req.CharacterID, Card: req.Card,
		Language: req.Language, Voice: req.Voice, PlayerName: req.PlayerName, Prompt: req.Prompt, Transcript: true}
	r, o := a.send(func(ctx context.Context) (*rpengine.Reply, error) { return a.srv.Capture(ctx, cr) }, false)
	if r == nil {
		return o
	}
	a.con.Printf("rpengine-demo: listening through the RPEngine page: speak, then press Enter to stop")
	o = a.consume(r, true, true)
	if errors.Is(o.err, rpengine.ErrMicrophoneNotEnabled) {
		a.con.Printf("hint: enable the microphone in the RPEngine page first")
	}
	return o
}

// drain waits for queued speech to finish playing (Ctrl-C stops it).
func (a *app) drain() {
	if a.player == nil {
		return
	}
	deadline := time.Now().Add(a.player.Stats().Queued + 2*time.Second)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for a.player.Stats().Queued > 0 && time.Now().Before(deadline) {
		select {
		case <-t.C:
		case <-a.sigs:
			a.player.Interrupt()
			return
		}
	}
}
