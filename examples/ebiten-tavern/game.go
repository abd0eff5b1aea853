package main

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"strings"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"
)

// The scene's size in pixels; the window scales it.
const (
	screenW = 800
	screenH = 480
)

// Input keys.
const (
	keySay       = ebiten.KeyEnter
	keyTalk      = ebiten.KeyTab // held: push to talk
	keyInterrupt = ebiten.KeyEscape
	maxLineRunes = 240
)

// game is the Ebitengine game: one scene, one character.
type game struct {
	cfg   *config
	ch    *character
	link  *link
	voice *voice
	art   *art

	started time.Time
	tick    int    // Update calls
	line    []rune // what the player is typing
	said    string // what the player said last
	turn    *turn  // the current or last turn
	notice  string // a hint or an error, shown until the tick until
	until   int
	link0   linkState // the link's state, read once per Update
	ts      turnState // the turn's state, read once per Update
	mouth   float32
	heard   bool // the last turn's speech has been heard to its end

	// --say / --screenshot / --exit-after-reply
	pendingSay string
	shotDue    bool // the next Draw writes the screenshot
	shotDone   bool
	exitCode   int
	quit       bool
}

func newGame(cfg *config, ch *character, k *link, v *voice) *game {
	return &game{cfg: cfg, ch: ch, link: k, voice: v, art: newArt(ch),
		started: time.Now(), pendingSay: strings.TrimSpace(cfg.Say)}
}

// Layout keeps the scene at its own size; Ebitengine scales the window.
func (g *game) Layout(int, int) (int, int) { return screenW, screenH }

// Update runs 60 times a second: input, the turn, the contract.
func (g *game) Update() error {
	if g.quit {
		return ebiten.Termination
	}
	g.tick++
	g.voice.tick()
	g.link0 = g.link.state()
	if g.turn != nil {
		g.ts = g.turn.state()
	}
	g.mouth = g.voice.speaker.Mouth()
	g.heard = g.turnHeard()

	if g.pendingSay != "" && g.turn == nil {
		g.send(g.pendingSay, nil)
		g.pendingSay = ""
	}
	g.typing()
	g.pushToTalk()
	if inpututil.IsKeyJustPressed(keyInterrupt) && g.busy() {
		g.turn.interrupt(g.voice.speaker)
	}
	g.contract()
	return nil
}

// busy reports whether a turn is waiting, streaming or still speaking.
func (g *game) busy() bool { return g.turn != nil && !(g.ts.Ended && g.heard) }

// turnHeard reports whether the last turn's speech has all been heard (or
// there is none to hear).
func (g *game) turnHeard() bool {
	if g.turn == nil || !g.ts.Ended {
		return false
	}
	if g.ts.Reply == "" || g.ts.Samples == 0 {
		return true
	}
	pos, ok := g.voice.speaker.Heard(g.ts.Reply)
	return !ok || pos.Done || pos.Interrupted
}

// typing edits the line being typed; Enter says it.
func (g *game) typing() {
	for _, r := range ebiten.AppendInputChars(nil) {
		if len(g.line) < maxLineRunes {
			g.line = append(g.line, r)
		}
	}
	if repeating(ebiten.KeyBackspace) && len(g.line) > 0 {
		g.line = g.line[:len(g.line)-1]
	}
	if inpututil.IsKeyJustPressed(keySay) || inpututil.IsKeyJustPressed(ebiten.KeyNumpadEnter) {
		text := strings.TrimSpace(string(g.line))
		switch {
		case text == "":
		case g.busy():
			g.say(g.ch.card.Name()+" is still talking; Esc interrupts.", 3)
		default:
			g.line = g.line[:0]
			g.send(text, nil)
		}
	}
}

// repeating reports a key press, repeated while the key is held.
func repeating(k ebiten.Key) bool {
	d := inpututil.KeyPressDuration(k)
	return d == 1 || (d > 30 && d%4 == 0)
}

// pushToTalk records while Tab is held and says the recording when it is
// released (or reaches its 30 s cap).
func (g *game) pushToTalk() {
	if inpututil.IsKeyJustPressed(keyTalk) {
		if g.busy() {
			g.say(g.ch.card.Name()+" is still talking; Esc interrupts.", 3)
		} else if err := g.voice.startTalking(); err != nil {
			g.say(err.Error(), 6)
		}
	}
	if _, _, on := g.voice.listening(); on && (!ebiten.IsKeyPressed(keyTalk) || g.voice.limitReached()) {
		speech, err := g.voice.stopTalking()
		switch {
		case err != nil:
			g.say(err.Error(), 6)
		case len(speech) > 0:
			g.send("", speech)
		}
	}
}

// send starts a turn with a typed line or recorded speech.
func (g *game) send(text string, speech []int16) {
	g.said = text
	if text == "" {
		g.said = fmt.Sprintf("(you spoke for %.1f s)", float64(len(speech))/speechRate)
	}
	g.notice = ""
	g.turn = g.link.say(g.ch, text, speech, sayOptions{voice: g.cfg.Voice, lang: g.cfg.Lang, textOnly: g.cfg.TextOnly}, g.voice.speaker)
	g.ts = turnState{}
}

// say shows a notice for the given number of seconds.
func (g *game) say(msg string, seconds int) {
	g.notice, g.until = msg, g.tick+seconds*ebiten.TPS()
}

// contract drives --screenshot and --exit-after-reply: once the reply has
// ended and been heard, the next frame is written, then the game exits.
func (g *game) contract() {
	if g.cfg.Say == "" || g.shotDone || g.shotDue {
		if g.shotDone && g.cfg.ExitAfter {
			g.quit = true
		}
		return
	}
	timedOut := g.cfg.ExitAfter && time.Since(g.started) > g.cfg.Wait
	if !(g.ts.Ended && g.heard) && !timedOut {
		return
	}
	g.report(timedOut)
	if g.cfg.Screenshot != "" {
		g.shotDue = true
	} else {
		g.shotDone = true
	}
}

// report prints the speech line of the scripted contract (see the package
// doc) and sets the exit code.
func (g *game) report(timedOut bool) {
	switch {
	case timedOut && !g.link0.Connected:
		g.exitCode = exitNoEngine
		fmt.Fprintf(os.Stderr, "ebiten-tavern: no engine connected within --wait %v\n", g.cfg.Wait)
	case timedOut:
		g.exitCode = exitFailed
		fmt.Fprintf(os.Stderr, "ebiten-tavern: the reply did not end within --wait %v\n", g.cfg.Wait)
	case g.ts.Err != nil:
		g.exitCode = exitFailed
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %s\n", describe(g.ts.Err))
	}
	if g.turn != nil && timedOut {
		g.turn.interrupt(g.voice.speaker)
	}
	pos, _ := g.voice.speaker.Heard(g.ts.Reply)
	delivered := int64(0)
	if g.ts.Rate > 0 {
		delivered = int64(math.Round(pos.Heard.Seconds() * float64(g.ts.Rate)))
	}
	fmt.Printf("speech reply=%s received=%d rate=%d delivered=%d done=%t interrupted=%t underruns=%d pulled=%d\n",
		g.ts.Reply, g.ts.Samples, g.ts.Rate, delivered, pos.Done, pos.Interrupted,
		g.voice.speaker.Stats().Underruns, g.voice.pulledFrames())
}

// Draw draws the scene, and writes the screenshot when it is due.
func (g *game) Draw(screen *ebiten.Image) {
	g.art.draw(screen, g.view())
	if g.shotDue {
		g.shotDue, g.shotDone = false, true
		if err := writePNG(screen, g.cfg.Screenshot); err != nil {
			fmt.Fprintf(os.Stderr, "ebiten-tavern: --screenshot: %v\n", err)
			g.exitCode = exitFailed
		}
	}
}

// view gathers what the scene shows this frame.
func (g *game) view() view {
	v := view{
		tick:    g.tick,
		link:    g.link0,
		sim:     g.cfg.Engine == "sim",
		mouth:   g.mouth,
		said:    g.said,
		reply:   g.ts.Text,
		waiting: g.turn != nil && !g.ts.Ended && g.ts.Text == "",
		line:    string(g.line),
		caret:   (g.tick/30)%2 == 0,
	}
	if g.ts.Ended && g.ts.Err != nil {
		v.problem = describe(g.ts.Err)
	}
	if g.notice != "" && g.tick < g.until {
		v.notice = g.notice
	}
	v.listening, v.level, v.recording = g.voice.listening()
	return v
}

// writePNG writes the screen image to name.
func writePNG(screen *ebiten.Image, name string) error {
	b := screen.Bounds()
	img := image.NewRGBA(b)
	screen.ReadPixels(img.Pix)
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
