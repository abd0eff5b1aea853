package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"unicode"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// marenCard is the tavern keeper the game talks to when --card is not
// given, written for this example.
//
//go:embed maren.json
var marenCard []byte

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// character is the card the game sends and what the scene shows of it.
type character struct {
	card     *card.Card
	id       string      // the game's id for the character, from its name
	portrait image.Image // the card's PNG, or nil: the scene draws one
	greeting string      // the card's first message, shown before the first turn
}

// loadCharacter reads a Character Card V2 from file, JSON or PNG ("" is
// the built-in card). A PNG card's image is the character's portrait.
func loadCharacter(file string) (*character, error) {
	data, source := marenCard, "built-in"
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("card: %w", err)
		}
		source = file
	}
	return parseCharacter(data, source)
}

func parseCharacter(data []byte, source string) (*character, error) {
	var portrait image.Image
	if bytes.HasPrefix(data, pngMagic) {
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("card %s: the portrait: %w", source, err)
		}
		portrait = img
		if data, err = card.ExtractPNG(data); err != nil {
			return nil, fmt.Errorf("card %s: %w", source, err)
		}
	}
	c, err := card.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("card %s: %w", source, err)
	}
	if err := c.Validate(); err != nil { // the engine would refuse it
		return nil, fmt.Errorf("card %s: %w (go run ./cmd/rpcard fix repairs most cards)", source, err)
	}
	return &character{card: c, id: characterID(c.Name()), portrait: portrait, greeting: greeting(c)}, nil
}

// greeting returns the card's first message with its {{char}} and
// {{user}} placeholders filled in.
func greeting(c *card.Card) string {
	var v struct {
		Data struct {
			FirstMes string `json:"first_mes"`
		} `json:"data"`
	}
	_ = json.Unmarshal(c.Bytes(), &v) // a valid card; a missing field is ""
	return strings.NewReplacer("{{char}}", c.Name(), "{{user}}", "traveller").Replace(v.Data.FirstMes)
}

// characterID derives a stable id from the card's name: "Maren" -> "maren".
func characterID(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	if id := strings.Trim(b.String(), "-"); id != "" {
		return id
	}
	return "character"
}
