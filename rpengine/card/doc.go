// Package card reads, checks, repairs, hashes and patches the Character
// Card V2 documents a game sends to RPEngine (protocol v3), and plans how
// each travels: by reference, as a verified patch, or whole.
//
// A game builds a card from Go values, or loads one a player downloaded,
// and hands it to package rpengine, whose server plans each transfer:
//
//	c, err := card.New(card.Data{Name: "Ari", Description: "A scout."}) // valid, or a *ValidationError
//	c, notes, err := card.Load(downloaded) // JSON or PNG, V1/V2/V3, repaired on load
//	c, err := card.Parse(jsonBytes)        // as it is: *ParseError with a JSON Pointer
//	err = c.Validate()                     // every violation, with pointers
//
// A [Planner] chooses the cheapest transfer that can succeed:
//
//	t, err := planner.Plan(card.Key{IntegrationID: "game", CharacterID: "ari"}, c)
//	// send t (json.Marshal gives the descriptor), then:
//	planner.Accepted(key, c, engineHash) // or planner.Resync on card_resync_required
//
// # Protocol
//
// A card is a JSON object kept exactly as parsed ([Card.Bytes]). Its hash
// ([Card.Hash], a [Digest]) is SHA-256 over its RFC 8785 (JCS) canonical
// form, which [AppendCanonical] writes. [Card.Validate] applies the
// engine's rules but reports every violation; [Load] and [Repair] turn
// what real tools export into a card the engine accepts, listing each
// [Change]. Patches are RFC 6902 with RFC 6901 pointers: [Diff] makes
// them, [ApplyPatch] applies them, and the Planner sends one only after
// applying it to the base gave the target. How it works is in
// docs/card.md.
//
// # Concurrency
//
// Every function may be called concurrently. A [Card] is immutable and
// safe for concurrent use. A [Planner] is not: it belongs to one session
// and its owner serializes calls. Everything here is synchronous and
// passive: no goroutines, no I/O, no clocks.
//
// # Security
//
// Every function refuses a document or patch over [MaxSize] before
// reading it; nesting is bounded (512 levels); copy operations cannot
// grow a document past MaxSize; patch application and Diff take time in
// proportion to their input (Diff within a bound of its own); PNG chunk
// lengths and CRCs are checked; a [Planner] keeps at most
// [PlannerOptions] MaxKeys characters and MaxBytes of their cards.
package card
