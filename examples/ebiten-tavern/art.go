package main

import (
	"bytes"
	"image"
	"image/color"
	"math"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/text/v2"
	"github.com/hajimehoshi/ebiten/v2/vector"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
)

// art holds the scene's sprites, painted once with anti-aliased vector
// shapes (slow in software GL), then drawn each frame as plain images.
type art struct {
	name, greeting string

	room   *ebiten.Image    // the wall, window, shelves and sign
	figure *ebiten.Image    // the character, without eyes and mouth; or the framed portrait
	eyes   [2]*ebiten.Image // open, shut (the drawn character only)
	mouths []*ebiten.Image  // closed to wide open (the drawn character only)
	front  *ebiten.Image    // the bar, and the frames of the dialogue box and the input line
	light  *ebiten.Image    // a soft white disc, for lights
	dot    *ebiten.Image    // a small white disc, for status lights
	plates map[color.NRGBA]*ebiten.Image
	white  *ebiten.Image // a white source for vector paths

	regular, italic, bold *text.GoTextFaceSource
}

func newArt(ch *character) *art {
	a := &art{name: ch.card.Name(), greeting: ch.greeting, white: ebiten.NewImage(3, 3)}
	a.white.Fill(color.White)
	a.regular = mustFont(goregular.TTF)
	a.italic = mustFont(goitalic.TTF)
	a.bold = mustFont(gobold.TTF)
	a.light = ebiten.NewImageFromImage(softDisc(64))
	a.dot = a.sprite(12, 12, func(dst *ebiten.Image) { vector.DrawFilledCircle(dst, 6, 6, 5, color.White, true) })
	a.room = a.sprite(screenW, screenH, a.paintRoom)
	a.front = a.sprite(screenW, screenH, a.paintFront)
	if ch.portrait != nil {
		a.figure = a.sprite(screenW, screenH, func(dst *ebiten.Image) { a.paintPortrait(dst, ch.portrait) })
	} else {
		a.figure = a.sprite(screenW, screenH, a.paintFigure)
		a.eyes[0] = a.sprite(eyesW, eyesH, func(dst *ebiten.Image) { a.paintEyes(dst, true) })
		a.eyes[1] = a.sprite(eyesW, eyesH, func(dst *ebiten.Image) { a.paintEyes(dst, false) })
		for i := range 8 {
			m := float32(i) / 7
			a.mouths = append(a.mouths, a.sprite(mouthW, mouthH, func(dst *ebiten.Image) { a.paintMouth(dst, m) }))
		}
	}
	a.plates = map[color.NRGBA]*ebiten.Image{}
	for _, c := range []color.NRGBA{gold, waitAmber, errRed, inputEdge, plaqueFill, alpha(waitAmber, 0.9)} {
		a.plates[c] = a.sprite(2*plateR+2, 2*plateR+2, func(dst *ebiten.Image) { a.paintPlate(dst, c) })
	}
	return a
}

// sprite returns a w x h image painted by paint.
func (a *art) sprite(w, h int, paint func(*ebiten.Image)) *ebiten.Image {
	img := ebiten.NewImage(w, h)
	paint(img)
	return img
}

func mustFont(ttf []byte) *text.GoTextFaceSource {
	s, err := text.NewGoTextFaceSource(bytes.NewReader(ttf))
	if err != nil {
		panic(err) // the fonts are compiled in
	}
	return s
}

func (a *art) face(src *text.GoTextFaceSource, size float64) *text.GoTextFace {
	return &text.GoTextFace{Source: src, Size: size}
}

// Palette.
var (
	wallDark   = rgb(0x24, 0x16, 0x0f)
	plankA     = rgb(0x3b, 0x26, 0x19)
	plankB     = rgb(0x34, 0x21, 0x16)
	beam       = rgb(0x1e, 0x12, 0x0b)
	woodLight  = rgb(0x8b, 0x5a, 0x33)
	woodEdge   = rgb(0xa8, 0x70, 0x3f)
	woodFront  = rgb(0x5a, 0x35, 0x1e)
	woodPanel  = rgb(0x47, 0x29, 0x1a)
	frameWood  = rgb(0x4a, 0x2e, 0x1c)
	gold       = rgb(0xd9, 0xb0, 0x6a)
	cream      = rgb(0xf2, 0xe6, 0xcf)
	dim        = rgb(0xb8, 0xa9, 0x8f)
	sky        = rgb(0x10, 0x1e, 0x38)
	moon       = rgb(0xef, 0xe6, 0xc4)
	flame      = rgb(0xff, 0xc8, 0x5a)
	okGreen    = rgb(0x6c, 0xc0, 0x6a)
	waitAmber  = rgb(0xf0, 0xb0, 0x40)
	errRed     = rgb(0xe0, 0x5a, 0x4a)
	inputEdge  = rgb(0x6e, 0x50, 0x32)
	panelFill  = color.NRGBA{0x14, 0x0c, 0x08, 0xeb}
	plaqueFill = color.NRGBA{0x14, 0x0c, 0x08, 0xd8}
)

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 0xff} }

func alpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Max(0, math.Min(255, a*255)))
	return c
}

// fill fills the path p with c, anti-aliased.
func (a *art) fill(dst *ebiten.Image, p *vector.Path, c color.Color) {
	vs, is := p.AppendVerticesAndIndicesForFilling(nil, nil)
	a.drawVertices(dst, vs, is, c)
}

// stroke draws the outline of p, width pixels wide, in c, anti-aliased.
func (a *art) stroke(dst *ebiten.Image, p *vector.Path, width float32, c color.Color) {
	vs, is := p.AppendVerticesAndIndicesForStroke(nil, nil, &vector.StrokeOptions{Width: width, LineJoin: vector.LineJoinRound, LineCap: vector.LineCapRound})
	a.drawVertices(dst, vs, is, c)
}

func (a *art) drawVertices(dst *ebiten.Image, vs []ebiten.Vertex, is []uint16, c color.Color) {
	r, g, b, al := c.RGBA()
	for i := range vs {
		vs[i].SrcX, vs[i].SrcY = 1, 1
		vs[i].ColorR, vs[i].ColorG, vs[i].ColorB, vs[i].ColorA = float32(r)/0xffff, float32(g)/0xffff, float32(b)/0xffff, float32(al)/0xffff
	}
	op := &ebiten.DrawTrianglesOptions{ColorScaleMode: ebiten.ColorScaleModePremultipliedAlpha, AntiAlias: true, FillRule: ebiten.FillRuleNonZero}
	dst.DrawTriangles(vs, is, a.white.SubImage(image.Rect(1, 1, 2, 2)).(*ebiten.Image), op)
}

// roundRect returns the path of a rectangle with rounded corners.
func roundRect(x, y, w, h, r float32) *vector.Path {
	var p vector.Path
	p.MoveTo(x+r, y)
	p.ArcTo(x+w, y, x+w, y+h, r)
	p.ArcTo(x+w, y+h, x, y+h, r)
	p.ArcTo(x, y+h, x, y, r)
	p.ArcTo(x, y, x+w, y, r)
	p.Close()
	return &p
}

// ellipse returns the path of an ellipse.
func ellipse(cx, cy, rx, ry float32) *vector.Path {
	var p vector.Path
	const n = 32
	for i := 0; i <= n; i++ {
		t := float64(i) / n * 2 * math.Pi
		x, y := cx+rx*float32(math.Cos(t)), cy+ry*float32(math.Sin(t))
		if i == 0 {
			p.MoveTo(x, y)
		} else {
			p.LineTo(x, y)
		}
	}
	p.Close()
	return &p
}

// panel paints a rounded box with a border.
func (a *art) panel(dst *ebiten.Image, x, y, w, h float32, fill, border color.Color) {
	a.fill(dst, roundRect(x, y, w, h, 8), fill)
	a.stroke(dst, roundRect(x, y, w, h, 8), 1.5, border)
}

// plateR is the corner radius of plates, the boxes drawn at run time.
const plateR = 7

// paintPlate paints the corner pattern of a plate: a dark rounded box with
// a border of c, or a box filled with c when c is a fill colour.
func (a *art) paintPlate(dst *ebiten.Image, c color.NRGBA) {
	s := float32(2*plateR + 2)
	if c.A < 0xff { // a fill colour
		a.fill(dst, roundRect(0, 0, s, s, plateR), c)
		return
	}
	a.fill(dst, roundRect(0.75, 0.75, s-1.5, s-1.5, plateR), panelFill)
	a.stroke(dst, roundRect(0.75, 0.75, s-1.5, s-1.5, plateR), 1.5, c)
}

// plate draws a box of any size from a plate's pattern in nine pieces:
// corners as they are, edges and middle stretched.
func (a *art) plate(dst *ebiten.Image, c color.NRGBA, x, y, w, h float64) {
	img := a.plates[c]
	n := float64(img.Bounds().Dx())
	k := float64(plateR)
	cuts := [4]float64{0, k, n - k, n}           // in the pattern
	xs := [4]float64{x, x + k, x + w - k, x + w} // on the screen
	ys := [4]float64{y, y + k, y + h - k, y + h}
	for j := range 3 {
		for i := range 3 {
			src := img.SubImage(image.Rect(int(cuts[i]), int(cuts[j]), int(cuts[i+1]), int(cuts[j+1]))).(*ebiten.Image)
			op := &ebiten.DrawImageOptions{}
			op.GeoM.Scale((xs[i+1]-xs[i])/(cuts[i+1]-cuts[i]), (ys[j+1]-ys[j])/(cuts[j+1]-cuts[j]))
			op.GeoM.Translate(xs[i], ys[j])
			dst.DrawImage(src, op)
		}
	}
}

// label draws s with its top-left corner at (x, y) and returns its width.
func (a *art) label(dst *ebiten.Image, s string, face *text.GoTextFace, x, y float64, c color.Color) float64 {
	op := &text.DrawOptions{}
	op.GeoM.Translate(x, y)
	op.ColorScale.ScaleWithColor(c)
	text.Draw(dst, s, face, op)
	return text.Advance(s, face)
}

// drawDot draws a status light of colour c centred on (x, y).
func (a *art) drawDot(dst *ebiten.Image, x, y float64, c color.Color) {
	op := &ebiten.DrawImageOptions{}
	op.GeoM.Translate(x-6, y-6)
	op.ColorScale.ScaleWithColor(c)
	dst.DrawImage(a.dot, op)
}

// glow adds a soft light of radii rx, ry around (cx, cy).
func (a *art) glow(dst *ebiten.Image, cx, cy, rx, ry float64, c color.NRGBA, strength float64) {
	op := &ebiten.DrawImageOptions{Blend: ebiten.BlendLighter, Filter: ebiten.FilterLinear}
	n := float64(a.light.Bounds().Dx())
	op.GeoM.Scale(2*rx/n, 2*ry/n)
	op.GeoM.Translate(cx-rx, cy-ry)
	op.ColorScale.ScaleWithColor(c)
	op.ColorScale.ScaleAlpha(float32(strength))
	dst.DrawImage(a.light, op)
}

// softDisc returns a white disc whose alpha falls smoothly to 0 at its
// edge.
func softDisc(size int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	c := float64(size-1) / 2
	for y := range size {
		for x := range size {
			d := math.Hypot(float64(x)-c, float64(y)-c) / c
			f := math.Max(0, 1-d)
			img.SetNRGBA(x, y, color.NRGBA{0xff, 0xff, 0xff, uint8(255 * f * f)})
		}
	}
	return img
}
