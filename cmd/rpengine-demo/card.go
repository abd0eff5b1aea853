package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

// cardError is a card the demo cannot send. Its text lists every problem
// and what to do about it.
type cardError struct{ msg string }

func (e *cardError) Error() string { return e.msg }

// loadedCard is a card ready to send, with notes for the player.
type loadedCard struct {
	card   *card.Card
	source string // file name, or "built-in"
	// notes are the repairs card.Load applied (the card as exported would
	// be refused by the engine; what is sent is the repaired card).
	notes []card.Change
	// unsafe explains why the card travels as a snapshot without a target
	// hash (docs/rpengine-protocol.md, "Cards and hashes"), or is "".
	unsafe string
}

// loadCard reads the card in file ("" for the built-in one) with
// card.Load: JSON or PNG, repaired on load. again says how to load a card
// again after fixing it ("--card FILE" at start, "/card FILE" in a
// session), for the hint of a card that is refused.
func loadCard(file, again string) (*loadedCard, error) {
	data, source := builtinCard, "built-in"
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			hint := "check the path"
			if !errors.Is(err, fs.ErrNotExist) {
				hint = "check that the file can be read"
			}
			return nil, &cardError{msg: fmt.Sprintf("card: %v; %s, then %s", err, hint, again)}
		}
		source = file
	}
	return parseCard(data, source, again)
}

func parseCard(data []byte, source, again string) (*loadedCard, error) {
	c, notes, err := card.Load(data)
	if err != nil {
		return nil, refusal(source, again, err)
	}
	lc := &loadedCard{card: c, source: source, notes: notes}
	if err := c.CheckNumbers(); err != nil {
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

// refusal explains a card card.Load refused, and what to do about it:
// every violation no repair could fix, or what is wrong with the file.
func refusal(source, again string, err error) error {
	var b strings.Builder
	var v *card.ValidationError
	var pe *card.ParseError
	switch {
	case errors.As(err, &v):
		fmt.Fprintf(&b, "card %s breaks %s the engine enforces, which no repair can fix without changing its content:\n",
			source, plural(len(v.Violations), "Character Card V2 rule"))
		for _, x := range v.Violations {
			fmt.Fprintf(&b, "  %s\n", x)
		}
		fmt.Fprintf(&b, "hint: edit those values in the card by hand, then %s", again)
	case errors.As(err, &pe):
		fmt.Fprintf(&b, "card %s is not valid JSON: %v\nhint: fix the JSON there in a text editor, then %s", source, err, again)
	default: // a PNG without a readable card
		fmt.Fprintf(&b, "card %s: %v\nhint: export the card again from the tool it came from (PNG or JSON), then %s", source, err, again)
	}
	return &cardError{msg: b.String()}
}

// describeNotes says, on one line per repair, what card.Load changed.
func (lc *loadedCard) describeNotes() []string {
	if len(lc.notes) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("card %s was repaired on load (%s; the repaired card is what is sent):",
		lc.source, plural(len(lc.notes), "change"))}
	for _, n := range lc.notes {
		out = append(out, "  "+n.String())
	}
	return out
}

// greeting is the card's first message as the player reads it, its
// macros ({{char}}, {{user}}, <BOT>, <USER>) replaced: user is the
// player's name (--player, or the engine's "Player").
func (lc *loadedCard) greeting(user string) string {
	if user == "" {
		user = "Player"
	}
	d := lc.card.Data()
	return card.Substitute(d.FirstMessage, d.Name, user)
}

// plural formats n and a noun that takes an s.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// characterID derives a stable id from the card's name: "Wren" -> "wren".
// Letters and digits outside ASCII have no slug, so a name that has any
// gets a short hash of the whole name after its ASCII part: "東京" ->
// "character-1a2b3c4d", "Zoë" -> "zo-5e6f7a8b". The same name always gives
// the same id, and two names differing only in such letters differ.
func characterID(name string) string {
	var b strings.Builder
	other := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if alnum && r < unicode.MaxASCII {
			b.WriteRune(r)
			continue
		}
		other = other || alnum
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
