package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
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

// playerName is what the game calls the player: the engine's {{user}}, and
// the greeting's.
const playerName = "traveller"

// character is the card the game sends and what the scene shows of it.
type character struct {
	card     *card.Card
	id       string      // the game's id for the character, from its name
	portrait image.Image // the card's PNG, or nil: the scene draws one
	greeting string      // the card's first message, shown before the first turn
	// repairs are what card.Load changed in a card as it was exported (a
	// V1 or V3 card, a lorebook without its extensions): the repaired card
	// is what the engine gets.
	repairs []card.Change
}

// loadCharacter reads a character card from file, JSON or PNG, as players
// download it ("" is the built-in card). A PNG card's image is the
// character's portrait.
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
	// JSON or PNG, V1, V2 or V3: repaired on load where a repair keeps the
	// card's meaning, so a card works as it was exported.
	c, repairs, err := card.Load(data)
	var invalid *card.ValidationError
	switch {
	case errors.As(err, &invalid): // the engine would refuse it
		return nil, fmt.Errorf("card %s: %w (no repair can fix that without changing the card: edit those values by hand)", source, err)
	case err != nil:
		return nil, fmt.Errorf("card %s: %w", source, err)
	}
	var portrait image.Image
	if p := c.Portrait(); p != nil {
		if portrait, err = png.Decode(bytes.NewReader(p)); err != nil {
			return nil, fmt.Errorf("card %s: the portrait: %w", source, err)
		}
	}
	d := c.Data()
	return &character{card: c, id: characterID(d.Name), portrait: portrait,
		greeting: card.Substitute(d.FirstMessage, d.Name, playerName), repairs: repairs}, nil
}

// characterID derives a stable id from the card's name: "Maren" -> "maren".
// Letters and digits outside ASCII have no slug, so a name that has any
// gets a short hash of the whole name after its ASCII part ("電影" ->
// "character-1a2b3c4d"): two such names never share an id.
func characterID(name string) string {
	var b strings.Builder
	other := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && r < unicode.MaxASCII:
			b.WriteRune(r)
			continue
		case alnum:
			other = true
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	if id == "" {
		id = "character"
	}
	if other {
		sum := sha256.Sum256([]byte(strings.TrimSpace(name)))
		id += "-" + hex.EncodeToString(sum[:4])
	}
	return id
}
