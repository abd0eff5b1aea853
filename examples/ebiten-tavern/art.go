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

// art holds what drawing needs: fonts, the portrait, the painted room.
type art struct {
	name     string
	portrait *ebiten.Image // the card's picture, or nil: drawPlaceholder
	room     *ebiten.Image // the static background, painted once
	white    *ebiten.Image // a white pixel source for vector paths
	light    *ebiten.Image // a soft white disc, for lights

	regular, italic, bold *text.GoTextFaceSource
}

func newArt(ch *character) *art {
	a := &art{name: ch.card.Name(), white: ebiten.NewImage(3, 3)}
	a.white.Fill(color.White)
	a.light = ebiten.NewImageFromImage(softDisc(64))
	a.regular = mustFont(goregular.TTF)
	a.italic = mustFont(goitalic.TTF)
	a.bold = mustFont(gobold.TTF)
	if ch.portrait != nil {
		a.portrait = ebiten.NewImageFromImage(ch.portrait)
	}
	return a
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
	panelFill  = color.NRGBA{0x14, 0x0c, 0x08, 0xeb}
	plaqueFill = color.NRGBA{0x14, 0x0c, 0x08, 0xd8}
)

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 0xff} }

func alpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Max(0, math.Min(255, a*255)))
	return c
}

// fill fills the path p with c.
func (a *art) fill(dst *ebiten.Image, p *vector.Path, c color.Color) {
	vs, is := p.AppendVerticesAndIndicesForFilling(nil, nil)
	a.drawVertices(dst, vs, is, c, ebiten.FillRuleNonZero)
}

// stroke draws the outline of p, width pixels wide, in c.
func (a *art) stroke(dst *ebiten.Image, p *vector.Path, width float32, c color.Color) {
	vs, is := p.AppendVerticesAndIndicesForStroke(nil, nil, &vector.StrokeOptions{Width: width, LineJoin: vector.LineJoinRound, LineCap: vector.LineCapRound})
	a.drawVertices(dst, vs, is, c, ebiten.FillRuleNonZero)
}

func (a *art) drawVertices(dst *ebiten.Image, vs []ebiten.Vertex, is []uint16, c color.Color, rule ebiten.FillRule) {
	r, g, b, al := c.RGBA()
	for i := range vs {
		vs[i].SrcX, vs[i].SrcY = 1, 1
		vs[i].ColorR, vs[i].ColorG, vs[i].ColorB, vs[i].ColorA = float32(r)/0xffff, float32(g)/0xffff, float32(b)/0xffff, float32(al)/0xffff
	}
	op := &ebiten.DrawTrianglesOptions{ColorScaleMode: ebiten.ColorScaleModePremultipliedAlpha, AntiAlias: true, FillRule: rule}
	dst.DrawTriangles(vs, is, a.white.SubImage(a.white.Bounds().Inset(1)).(*ebiten.Image), op)
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

// panel draws a rounded plaque with a border.
func (a *art) panel(dst *ebiten.Image, x, y, w, h float32, fill, border color.Color) {
	a.fill(dst, roundRect(x, y, w, h, 8), fill)
	a.stroke(dst, roundRect(x, y, w, h, 8), 1.5, border)
}

// label draws s with its top-left corner at (x, y) and returns its width.
func (a *art) label(dst *ebiten.Image, s string, face *text.GoTextFace, x, y float64, c color.Color) float64 {
	op := &text.DrawOptions{}
	op.GeoM.Translate(x, y)
	op.ColorScale.ScaleWithColor(c)
	text.Draw(dst, s, face, op)
	return text.Advance(s, face)
}

// glow adds a soft round light of radius r around (cx, cy).
func (a *art) glow(dst *ebiten.Image, cx, cy, r float64, c color.NRGBA, strength float64) {
	op := &ebiten.DrawImageOptions{Blend: ebiten.BlendLighter, Filter: ebiten.FilterLinear}
	s := 2 * r / float64(a.light.Bounds().Dx())
	op.GeoM.Scale(s, s)
	op.GeoM.Translate(cx-r, cy-r)
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
