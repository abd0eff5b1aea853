package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/text/v2"
	"github.com/hajimehoshi/ebiten/v2/vector"
)

// view is everything the scene shows in one frame.
type view struct {
	tick            int
	link            linkState
	sim             bool
	mouth           float32 // 0..1, at the heard position
	said            string  // the player's last line
	reply           string  // the reply's text so far
	waiting         bool    // a turn waits for its first words
	line            string  // what the player is typing
	caret           bool
	problem, notice string
	listening       time.Duration // push to talk: recorded so far
	level           float32       // and its RMS
	recording       bool
}

// Where things are.
const (
	charX          = 300 // the character's centre
	headY          = 168
	counterY       = 270 // the bar's top
	boxY           = 338 // the dialogue box
	boxH           = 94
	inputY         = 440
	eyesW, eyesH   = 50, 16 // the eye sprites, centred on (charX, headY-1)
	mouthW, mouthH = 32, 30 // the mouth sprites, centred on (charX, headY+26)
)

// draw draws one frame: sprites painted once, then what moves.
func (a *art) draw(dst *ebiten.Image, v view) {
	dst.DrawImage(a.room, nil)
	a.drawLights(dst, v.tick)
	a.drawCharacter(dst, v.tick, v.mouth)
	dst.DrawImage(a.front, nil)
	a.drawCandle(dst, v.tick)
	a.drawDialogue(dst, v)
	a.drawInput(dst, v)
	a.drawStatus(dst, v)
}

// paintRoom paints what never moves: wall, beams, window, shelves, sign,
// and the lantern's frame.
func (a *art) paintRoom(dst *ebiten.Image) {
	dst.Fill(wallDark)
	for i := 0; i*44 < screenW; i++ {
		c := plankA
		if i%2 == 1 {
			c = plankB
		}
		x := float32(i * 44)
		vector.DrawFilledRect(dst, x, 30, 42, counterY, c, false)
		vector.DrawFilledRect(dst, x+42, 30, 2, counterY, beam, false)
		vector.DrawFilledCircle(dst, x+21, 60+float32((i*37)%150), 2, beam, true) // knots
	}
	vector.DrawFilledRect(dst, 0, 0, screenW, 30, beam, false)
	vector.DrawFilledRect(dst, 0, 30, screenW, 4, rgb(0x30, 0x1d, 0x12), false)

	// The window, and the night outside.
	vector.DrawFilledRect(dst, 44, 92, 162, 150, frameWood, false)
	vector.DrawFilledRect(dst, 54, 102, 142, 130, sky, false)
	vector.DrawFilledRect(dst, 54, 170, 142, 62, rgb(0x16, 0x28, 0x48), false)
	for i := range 14 {
		vector.DrawFilledCircle(dst, 60+float32((i*53)%134), 108+float32((i*29)%60), 1, alpha(cream, 0.7), true)
	}
	vector.DrawFilledCircle(dst, 160, 130, 15, moon, true)
	vector.DrawFilledCircle(dst, 166, 126, 13, sky, true) // a crescent
	vector.DrawFilledRect(dst, 122, 102, 6, 130, frameWood, false)
	vector.DrawFilledRect(dst, 54, 164, 142, 6, frameWood, false)
	vector.DrawFilledRect(dst, 38, 240, 174, 8, woodFront, false)

	// The sign above the window.
	a.fill(dst, roundRect(38, 46, 170, 34, 5), rgb(0x2a, 0x18, 0x0e))
	a.stroke(dst, roundRect(38, 46, 170, 34, 5), 2, gold)
	title := a.face(a.bold, 12)
	w := text.Advance("THE DROWNED LANTERN", title)
	a.label(dst, "THE DROWNED LANTERN", title, 123-w/2, 55, gold)

	// Shelves of bottles behind the bar.
	glass := []color.NRGBA{rgb(0x3e, 0x7a, 0x4a), rgb(0x9a, 0x5a, 0x22), rgb(0x7a, 0x22, 0x2e), rgb(0x5a, 0x6e, 0x2a), rgb(0x2e, 0x4e, 0x6e)}
	for s, y := range []float32{128, 196} {
		vector.DrawFilledRect(dst, 478, y, 290, 8, woodLight, false)
		vector.DrawFilledRect(dst, 478, y+8, 290, 3, beam, false)
		for i := range 9 {
			x := 490 + float32(i*31)
			h := 28 + float32((i*7+s*3)%14)
			c := glass[(i+s*2)%len(glass)]
			a.fill(dst, roundRect(x, y-h, 16, h, 4), c)
			vector.DrawFilledRect(dst, x+5, y-h-9, 6, 10, c, false)
			vector.DrawFilledRect(dst, x+4, y-h-11, 8, 3, rgb(0x6a, 0x4a, 0x2a), false)
			vector.DrawFilledRect(dst, x+3, y-h+5, 2, h-10, alpha(cream, 0.25), false)
		}
	}

	// The lantern the tavern is named for (its light is drawn each frame).
	vector.StrokeLine(dst, 440, 0, 440, 44, 2, rgb(0x6a, 0x5a, 0x40), true)
	a.fill(dst, roundRect(426, 44, 28, 40, 6), rgb(0x9a, 0x7a, 0x3e))
	vector.DrawFilledRect(dst, 424, 82, 32, 4, rgb(0x6a, 0x5a, 0x40), false)
}

// paintFront paints what stands before the character: the bar with a mug
// and a candlestick, and the frames of the dialogue box and input line.
func (a *art) paintFront(dst *ebiten.Image) {
	vector.DrawFilledRect(dst, 0, counterY, screenW, 14, woodLight, false)
	vector.DrawFilledRect(dst, 0, counterY, screenW, 2, woodEdge, false)
	vector.DrawFilledRect(dst, 0, counterY+14, screenW, screenH-counterY-14, woodFront, false)
	for x := float32(60); x < screenW; x += 120 {
		vector.StrokeRect(dst, x, counterY+24, 90, 60, 2, woodPanel, false)
	}
	vector.StrokeCircle(dst, 418, counterY-14, 8, 4, rgb(0x6a, 0x42, 0x22), true)
	a.fill(dst, roundRect(386, counterY-30, 26, 31, 3), rgb(0x8a, 0x5a, 0x30))
	vector.DrawFilledRect(dst, 386, counterY-22, 26, 3, rgb(0x5a, 0x3a, 0x1e), false)
	a.fill(dst, ellipse(399, counterY-30, 14, 5), cream)
	vector.DrawFilledRect(dst, 154, counterY-26, 12, 26, cream, false)
	a.fill(dst, ellipse(160, counterY-1, 14, 4), rgb(0x9a, 0x7a, 0x3e))

	a.panel(dst, 16, boxY, 768, boxH, panelFill, gold)
	name := a.face(a.bold, 16)
	nw := float32(text.Advance(a.name, name))
	a.fill(dst, roundRect(30, boxY-16, nw+56, 28, 6), rgb(0x6a, 0x3a, 0x1c))
	a.stroke(dst, roundRect(30, boxY-16, nw+56, 28, 6), 1.5, gold)
	a.label(dst, a.name, name, 42, boxY-12, cream)
	a.panel(dst, 16, inputY, 768, 32, plaqueFill, inputEdge)
}

// drawLights draws the lantern's glass and the lights' flicker.
func (a *art) drawLights(dst *ebiten.Image, tick int) {
	t := float64(tick) / 60
	flicker := 0.85 + 0.1*math.Sin(t*7.3) + 0.05*math.Sin(t*17.1)
	a.glow(dst, 440, 70, 220, 220, rgb(0xff, 0xa8, 0x40), 0.35*flicker)
	a.glow(dst, 820, 240, 300, 300, rgb(0xff, 0x70, 0x20), 0.25*flicker) // the fire, off to the right
	vector.DrawFilledRect(dst, 431, 50, 18, 28, alpha(flame, 0.6+0.3*flicker), false)
	a.glow(dst, 440, 64, 9, 12, rgb(0xff, 0xf0, 0xc0), 1)
}

// drawCandle draws the candle's flame and its light.
func (a *art) drawCandle(dst *ebiten.Image, tick int) {
	t := float64(tick) / 60
	sway := 1.5 * math.Sin(t*5.1)
	flicker := 0.9 + 0.1*math.Sin(t*9.7)
	a.glow(dst, 160, counterY-36, 70, 70, rgb(0xff, 0xb0, 0x50), 0.45*flicker)
	a.glow(dst, 160+sway/2, counterY-34, 6, 12, flame, 1)
	a.glow(dst, 160+sway/2, counterY-32, 3, 6, rgb(0xff, 0xf4, 0xd0), 1)
}

// drawCharacter draws the character. The drawn one's mouth opens with the
// speech as it is heard, and she blinks now and then; a card's picture
// has no mouth to move, so it lifts slightly with her voice (the voice
// bars by her name show the same envelope).
func (a *art) drawCharacter(dst *ebiten.Image, tick int, mouth float32) {
	op := &ebiten.DrawImageOptions{}
	if a.mouths == nil {
		op.GeoM.Translate(0, -3*float64(mouth))
		dst.DrawImage(a.figure, op)
		return
	}
	dst.DrawImage(a.figure, op)
	eyes := a.eyes[0]
	if (tick+90)%260 < 6 {
		eyes = a.eyes[1]
	}
	op.GeoM.Translate(charX-eyesW/2, headY-1-eyesH/2)
	dst.DrawImage(eyes, op)
	m := a.mouths[min(len(a.mouths)-1, int(mouth*float32(len(a.mouths))))]
	op.GeoM.Reset()
	op.GeoM.Translate(charX-mouthW/2, headY+26-mouthH/2)
	dst.DrawImage(m, op)
}

// paintFigure paints the tavern keeper, for a card without a picture:
// all but her eyes and mouth, which are sprites of their own.
func (a *art) paintFigure(dst *ebiten.Image) {
	skin, hair := rgb(0xe8, 0xb4, 0x96), rgb(0xa7, 0xa2, 0x9a)
	x, y := float32(charX), float32(headY)
	// Body: dress, apron, shoulders.
	var body vector.Path
	body.MoveTo(x-40, y+44)
	body.LineTo(x+40, y+44)
	body.QuadTo(x+92, y+54, x+100, y+110)
	body.LineTo(x-100, y+110)
	body.QuadTo(x-92, y+54, x-40, y+44)
	body.Close()
	a.fill(dst, &body, rgb(0x34, 0x55, 0x7a))
	a.fill(dst, roundRect(x-42, y+64, 84, 60, 10), rgb(0xe6, 0xdc, 0xc4))
	vector.DrawFilledRect(dst, x-12, y+30, 24, 20, rgb(0xd8, 0x9c, 0x80), false)
	// Head, hair, kerchief.
	vector.DrawFilledCircle(dst, x, y-6, 49, hair, true)
	vector.DrawFilledCircle(dst, x, y-56, 18, hair, true)
	vector.DrawFilledCircle(dst, x-44, y+2, 8, skin, true)
	vector.DrawFilledCircle(dst, x+44, y+2, 8, skin, true)
	a.fill(dst, ellipse(x, y+4, 42, 46), skin)
	for _, side := range []float32{-1, 1} { // locks of hair over the temples
		var lock vector.Path
		lock.MoveTo(x+side*46, y-20)
		lock.QuadTo(x+side*30, y-34, x+side*14, y-30)
		lock.QuadTo(x+side*32, y-20, x+side*40, y+10)
		lock.Close()
		a.fill(dst, &lock, hair)
	}
	var scarf vector.Path
	scarf.MoveTo(x-47, y-18)
	scarf.QuadTo(x, y-78, x+47, y-18)
	scarf.QuadTo(x, y-44, x-47, y-18)
	scarf.Close()
	a.fill(dst, &scarf, rgb(0x2f, 0x5d, 0x8a))
	// Cheeks, brows, nose.
	vector.DrawFilledCircle(dst, x-24, y+16, 8, alpha(rgb(0xe0, 0x60, 0x60), 0.35), true)
	vector.DrawFilledCircle(dst, x+24, y+16, 8, alpha(rgb(0xe0, 0x60, 0x60), 0.35), true)
	vector.StrokeLine(dst, x-26, y-12, x-10, y-14, 3, rgb(0x7a, 0x76, 0x70), true)
	vector.StrokeLine(dst, x+10, y-14, x+26, y-12, 3, rgb(0x7a, 0x76, 0x70), true)
	var nose vector.Path
	nose.MoveTo(x-1, y+2)
	nose.QuadTo(x-6, y+14, x+2, y+14)
	a.stroke(dst, &nose, 2, rgb(0xc0, 0x84, 0x6a))
}

// paintEyes paints both eyes, open or shut, centred in the sprite.
func (a *art) paintEyes(dst *ebiten.Image, open bool) {
	y := float32(eyesH / 2)
	for _, x := range []float32{eyesW/2 - 17, eyesW/2 + 17} {
		if !open {
			vector.StrokeLine(dst, x-6, y, x+6, y, 2, rgb(0x5a, 0x3a, 0x2e), true)
			continue
		}
		a.fill(dst, ellipse(x, y, 7, 5.5), rgb(0xfb, 0xf4, 0xea))
		vector.DrawFilledCircle(dst, x+1, y, 4, rgb(0x4a, 0x6a, 0x5a), true)
		vector.DrawFilledCircle(dst, x+1, y, 2, rgb(0x1a, 0x12, 0x10), true)
		vector.DrawFilledCircle(dst, x+2.5, y-1.5, 1, color.White, true)
	}
}

// paintMouth paints the mouth open by m (0..1), its top lip at the
// sprite's centre.
func (a *art) paintMouth(dst *ebiten.Image, m float32) {
	x, y := float32(mouthW/2), float32(mouthH/2)
	if m < 0.1 {
		var smile vector.Path
		smile.MoveTo(x-11, y-1)
		smile.QuadTo(x, y+5, x+11, y-1)
		a.stroke(dst, &smile, 2.5, rgb(0x8a, 0x3a, 0x34))
		return
	}
	h := 2 + 9*m
	a.fill(dst, ellipse(x, y+h/2-2, 10+3*m, h), rgb(0x5a, 0x1e, 0x1e))
	a.fill(dst, ellipse(x, y+h*1.1-2, 6+2*m, h/3), rgb(0xb0, 0x55, 0x4f))
}

// paintPortrait paints the card's picture in a frame behind the bar.
func (a *art) paintPortrait(dst *ebiten.Image, pic image.Image) {
	const boxW, boxH = 160.0, 236.0
	img := ebiten.NewImageFromImage(pic)
	b := img.Bounds()
	scale := math.Min(boxW/float64(b.Dx()), boxH/float64(b.Dy()))
	w, h := float64(b.Dx())*scale, float64(b.Dy())*scale
	x, y := charX-w/2, 52+(boxH-h)/2
	a.fill(dst, roundRect(float32(x-8), float32(y-8), float32(w+16), float32(h+16), 6), frameWood)
	a.stroke(dst, roundRect(float32(x-8), float32(y-8), float32(w+16), float32(h+16), 6), 2, gold)
	op := &ebiten.DrawImageOptions{Filter: ebiten.FilterLinear}
	op.GeoM.Scale(scale, scale)
	op.GeoM.Translate(x, y)
	dst.DrawImage(img, op)
}

// drawDialogue draws the voice bars by the name, the player's line and
// the subtitles.
func (a *art) drawDialogue(dst *ebiten.Image, v view) {
	nw := float32(text.Advance(a.name, a.face(a.bold, 16)))
	for i := range 3 { // voice bars, with the lip-sync envelope
		h := 3 + 14*v.mouth*float32(0.6+0.4*math.Sin(float64(v.tick)/3+float64(i)*2))
		vector.DrawFilledRect(dst, 50+nw+float32(i*6), boxY-2-h/2, 3, h, gold, false)
	}

	y := float64(boxY + 16)
	if v.said != "" {
		a.label(dst, "You: "+clip(v.said, 90), a.face(a.italic, 14), 32, y, dim)
		y += 20
	}
	body := a.face(a.regular, 17)
	reply, greeting := v.reply, false
	switch {
	case v.waiting && !v.link.Connected:
		reply = "(" + a.name + " waits for RPEngine to connect...)"
	case v.waiting:
		reply = strings.Repeat(".", 1+(v.tick/20)%3)
	case v.said == "" && reply == "":
		reply, greeting = a.greeting, true
	}
	lines := fit(wrap(reply, body, 736), int((boxY+boxH-8-y)/21), greeting)
	for _, l := range lines {
		a.label(dst, l, body, 32, y, cream)
		y += 21
	}
}

// drawInput draws the line being typed, or push to talk's meter.
func (a *art) drawInput(dst *ebiten.Image, v view) {
	f := a.face(a.regular, 15)
	if v.recording {
		a.drawDot(dst, 34, inputY+16, errRed)
		a.label(dst, fmt.Sprintf("Listening... %.1f s  (release Tab to send)", v.listening.Seconds()), f, 48, inputY+7, cream)
		vector.DrawFilledRect(dst, 560, inputY+11, 200, 10, rgb(0x30, 0x22, 0x18), false)
		vector.DrawFilledRect(dst, 560, inputY+11, 200*min(1, v.level*4), 10, okGreen, false)
		return
	}
	if v.line == "" {
		a.label(dst, "Type to talk to "+a.name+" and press Enter  ·  hold Tab to speak  ·  Esc interrupts", f, 32, inputY+7, dim)
		return
	}
	s := "› " + v.line
	for r := []rune(v.line); text.Advance(s, f) > 730 && len(r) > 1; { // show the end of a long line
		r = r[1:]
		s = "…" + string(r)
	}
	w := a.label(dst, s, f, 32, inputY+7, cream)
	if v.caret {
		vector.DrawFilledRect(dst, float32(34+w), inputY+8, 2, 17, cream, false)
	}
}

// drawStatus shows the engine's state: connected (and its queue), or
// waiting (and what to open); and a badge when it is simulated.
func (a *art) drawStatus(dst *ebiten.Image, v view) {
	f := a.face(a.regular, 13)
	dot, msg := okGreen, "RPEngine connected"
	l := v.link
	switch {
	case !l.Connected:
		dot, msg = waitAmber, "Waiting for RPEngine"
	case l.QueueKnown:
		if l.Engine != "" {
			msg += " (" + clip(l.Engine, 28) + ")"
		}
		msg += fmt.Sprintf("  ·  queue %d/%d", l.Queue, l.QueueLimit)
		if !l.Accepting {
			dot, msg = waitAmber, msg+" (full)"
		}
	}
	w := text.Advance(msg, f)
	a.plate(dst, plaqueFill, 10, 6, w+34, 22)
	a.drawDot(dst, 22, 17, dot)
	a.label(dst, msg, f, 32, 9, cream)
	if v.sim {
		s := "SIMULATED ENGINE · replies are not from a model"
		sw := text.Advance(s, f)
		a.plate(dst, alpha(waitAmber, 0.9), screenW-sw-26, 6, sw+16, 22)
		a.label(dst, s, f, screenW-sw-18, 9, rgb(0x20, 0x14, 0x08))
	}

	var banner []string
	col := waitAmber
	switch {
	case !l.Connected && l.Mailbox != "":
		banner = []string{"Open " + l.OpenURL + " in your browser, start the engine,", "and select this game's mailbox folder: " + clip(l.Mailbox, 60)}
	case !l.Connected:
		banner = []string{"Open " + l.OpenURL + " in your browser", "and start the engine there; " + a.name + " will be ready."}
	case v.problem != "":
		banner, col = []string{clip(v.problem, 110)}, errRed
	}
	if v.notice != "" {
		banner = append(banner, clip(v.notice, 110))
	}
	if len(banner) == 0 {
		return
	}
	bf := a.face(a.regular, 15)
	bw := 0.0
	for _, s := range banner {
		bw = max(bw, text.Advance(s, bf))
	}
	x, h := screenW/2-bw/2-16, float64(14+20*len(banner))
	a.plate(dst, col, x, 40, bw+32, h)
	for i, s := range banner {
		a.label(dst, s, bf, x+16, float64(47+20*i), cream)
	}
}

// wrap breaks s into lines no wider than width, between words, or
// between characters where a word is wider than a line (as in Chinese or
// Japanese, written without spaces).
func wrap(s string, face text.Face, width float64) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		for r := []rune(w); text.Advance(w, face) > width && len(r) > 1; r = []rune(w) {
			n := len(r) - 1
			for n > 1 && text.Advance(string(r[:n]), face) > width {
				n--
			}
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			lines = append(lines, string(r[:n]))
			w = string(r[n:])
		}
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && text.Advance(try, face) > width {
			lines = append(lines, line)
			try = w
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// fit keeps room of lines: of a reply streaming in, the newest; of a
// greeting, read before anything is said, the first, the last of them
// ending in an ellipsis (Issue #32: a long greeting showed its tail).
func fit(lines []string, room int, fromStart bool) []string {
	switch {
	case len(lines) <= room || room <= 0:
		return lines
	case !fromStart:
		return lines[len(lines)-room:]
	}
	lines = slices.Clone(lines[:room])
	lines[room-1] += " …"
	return lines
}

// clip cuts s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
