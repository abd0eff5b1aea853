package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// builtinCard is the character the demo talks to when --card is not given,
// written for this project (so it runs anywhere, with no file to find).
//
//go:embed card.json
var builtinCard []byte

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// cardError is a card the demo cannot send. Its text lists every problem
// and what to do about it.
type cardError struct{ msg string }

func (e *cardError) Error() string { return e.msg }

// loadedCard is a card ready to send, with notes for the player.
type loadedCard struct {
	card   *card.Card
	source string // file name, or "built-in"
	// unsafe explains why the card travels as a snapshot without a target
	// hash (spec section 4.2), or is "".
	unsafe string
}

// loadCard reads, parses and validates the card in file ("" for the
// built-in one). Validation failures list every violation.
func loadCard(file string) (*loadedCard, error) {
	data, source := builtinCard, "built-in"
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, &cardError{msg: fmt.Sprintf("card: %v", err)}
		}
		source = file
	}
	return parseCard(data, source)
}

func parseCard(data []byte, source string) (*loadedCard, error) {
	if bytes.HasPrefix(data, pngMagic) {
		var err error
		if data, err = card.ExtractPNG(data); err != nil {
			return nil, &cardError{msg: fmt.Sprintf("card %s: %v", source, err)}
		}
	}
	c, err := card.Parse(data)
	if err != nil {
		return nil, &cardError{msg: fmt.Sprintf("card %s is not valid JSON: %v", source, err)}
	}
	if err := c.Validate(); err != nil {
		return nil, validationMessage(source, err)
	}
	lc := &loadedCard{card: c, source: source}
	if err := c.HashSafe(); err != nil {
		var u *card.UnsafeNumberError
		where := err.Error()
		if errors.As(err, &u) {
			where = fmt.Sprintf("the number %s at %s", u.Literal, u.Pointer)
		}
		lc.unsafe = fmt.Sprintf("%s may be hashed differently by the engine (RFC 8785 vs the engine's number printing), "+
			"so the card is sent as a full snapshot without targetHash and the engine's own hash is used from then on", where)
	}
	return lc, nil
}

// validationMessage lists every violation and the fix.
func validationMessage(source string, err error) error {
	var b strings.Builder
	var v *card.ValidationError
	if errors.As(err, &v) {
		fmt.Fprintf(&b, "card %s breaks %d Character Card V2 rule(s) the engine enforces:\n", source, len(v.Violations))
		for _, x := range v.Violations {
			p := x.Pointer
			if p == "" {
				p = "(root)"
			}
			fmt.Fprintf(&b, "  %s: %s\n", p, x.Message)
		}
	} else {
		fmt.Fprintf(&b, "card %s: %v\n", source, err)
	}
	fmt.Fprintf(&b, "hint: repair what can be repaired with `rpcard fix %s -o fixed.json` (go run ./cmd/rpcard), then use --card fixed.json", source)
	return &cardError{msg: b.String()}
}

// characterID derives a stable id from the card's name: "Wren" -> "wren".
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
	id := strings.Trim(b.String(), "-")
	if id == "" {
		return "character"
	}
	return id
}
