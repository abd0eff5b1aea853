package card

import "bytes"

// Load reads a character card as players download it and returns the card
// to send: a JSON document, or a PNG image carrying the card in a tEXt
// chunk (see [ExtractPNG]; a V3 "ccv3" chunk is preferred). The repairs
// of [Repair] that keep the card's meaning are applied on load, so a V1,
// Pygmalion or V3 card and a SillyTavern export whose lorebook lacks its
// extensions load as they are; each repair is returned as a [Change], a
// note to show the player or log. A card that needed no repair is
// returned exactly as given, with no notes.
//
// A PNG card keeps its image ([Card.Portrait]). The returned card is
// what travels to the engine: its [Card.Bytes] are
// the repaired document and its [Card.Hash] is the hash of those bytes,
// which the engine computes too.
//
// Only a card the engine would still refuse is an error: a document over
// [MaxSize] (an error matching [ErrTooLarge], before it is read), malformed JSON
// or PNG (a *[ParseError] or a PNG error), or a *[ValidationError] listing
// the rules that no repair can satisfy without changing content (a blank
// name, a value of the wrong type). The card is then nil; the notes say
// what was repaired before the violations were found.
func Load(data []byte) (*Card, []Change, error) {
	if err := checkSize(data, "document"); err != nil {
		return nil, nil, err
	}
	var portrait []byte
	if bytes.HasPrefix(data, pngSignature) {
		var err error
		if data, portrait, err = extractPNG(data); err != nil {
			return nil, nil, err
		}
	}
	c, notes, err := Repair(data)
	if err != nil {
		return nil, notes, err
	}
	c.portrait = portrait
	return c, notes, nil
}

// Portrait returns the image of a card [Load] read from a PNG: the PNG
// file without the chunks that held the card, decodable with image/png;
// nil for a card read from JSON. The caller must not modify it.
func (c *Card) Portrait() []byte { return c.portrait }
