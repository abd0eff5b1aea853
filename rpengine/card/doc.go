// Package card holds the characters a game sends to RPEngine: Character
// Card V2 documents, read from what players download or made from Go
// values, shown in the game's own UI, and sent to the engine (package
// rpengine plans each transfer with a [Planner]).
//
//	c, notes, err := card.Load(downloaded) // JSON or PNG, V1/V2/V3, repaired as SillyTavern imports it
//	if err != nil {
//		return err // a *ParseError or a *ValidationError: what the engine would refuse
//	}
//	for _, n := range notes {
//		log.Print("repaired ", n) // e.g. "/data/character_book/extensions: added missing required field with {}"
//	}
//	d := c.Data()
//	fmt.Println(card.Substitute(d.FirstMessage, d.Name, playerName)) // {{char}}, {{user}} replaced
//	portrait := c.Portrait() // a PNG card's image, for image/png; nil for JSON
//
// [New] makes a card from [Data]; [Parse] reads one as it is and
// [Card.Validate] lists every rule it breaks, with JSON Pointers.
//
// # Protocol
//
// A card is a JSON object kept exactly as given ([Card.Bytes]). Its hash
// ([Card.Hash], a [Digest]: 64 hex digits) is SHA-256 over its RFC 8785
// canonical form ([AppendCanonical]), as the engine computes it; numbers
// the engine may print otherwise are named by [Card.CheckNumbers].
// [Card.Validate] applies the engine's rules (docs/rpengine-protocol.md,
// "Cards and hashes"). A [Planner] sends a card by reference when the
// engine holds it, as an RFC 6902 patch ([Diff], [ApplyPatch]) when that
// is smaller and was verified on the engine's card, else whole. How
// canonicalization, patches and Diff work: docs/card.md.
//
// # Concurrency
//
// Every function may be called concurrently. A [Card] is immutable and
// safe for concurrent use. A [Planner] is not: it belongs to one session
// and its owner serializes calls. Everything is synchronous and passive:
// no goroutines, no I/O, no clocks.
//
// # Security
//
// Every function that takes bytes refuses more than [MaxSize] before
// reading them, with an error matching [ErrTooLarge]; nesting is bounded
// (512 levels); a patch cannot grow a document past MaxSize; patch
// application and Diff take time in proportion to their input (Diff
// within a bound of its own); PNG chunk lengths and CRCs are checked; a
// Planner keeps at most [PlannerOptions] MaxKeys characters and MaxBytes
// of their cards.
package card
