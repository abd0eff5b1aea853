// Package card parses, validates, repairs, hashes and patches Character
// Card V2 documents, and plans how each card travels to RPEngine (protocol
// v3; this project's notes on it are docs/rpengine-protocol.md, "Cards and
// hashes").
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
// A card is a JSON object kept exactly as parsed ([Card.Bytes]): unknown
// fields, extensions and member order survive. [Parse] rejects what RFC
// 8785 rejects (duplicate keys, also after unescaping; invalid UTF-8; lone
// surrogates; numbers beyond the double range) and documents over
// [MaxSize], the protocol's 8 MiB message limit. [Card.Validate] applies
// the rules of the engine's validator but reports them
// all; Parse checks them in the same pass that hashes, so Validate is
// free. [Repair] turns V1, Pygmalion, V3 and incomplete exports into
// valid V2 (V1 and Pygmalion fields mapped as SillyTavern imports them),
// listing each [Change]; [ExtractPNG] reads a card from a PNG's tEXt
// chunk. [Load] is what a game calls on a card a player downloaded: JSON
// or PNG, with Repair's changes applied and returned as notes, and an
// error only for a card the engine would still refuse.
//
// The hash is SHA-256 over the RFC 8785 (JCS) canonical JSON of the whole
// card, 64 lowercase hex ([Digest]). The canonicalizer ([AppendCanonical])
// builds no tree of values: a first pass parses, keeps the source's bytes
// wherever they already are canonical (compact JSON copies nothing) and
// sorts each object's members by UTF-16 code units (RFC 8785 section
// 3.2.3) as offsets, reusing the order learned for a repeated object shape;
// a second pass copies the output once in that order. The document is
// checked as UTF-8 once (64 bytes a step with AVX-512, 32 with AVX2), so
// strings are scanned only for their closing quote, 64 bytes a step with
// AVX-512 or AVX2, a block's escapes found with masks as simdjson finds
// them (a word at a time without AVX2, or with the purego build tag); an
// object opened where one of a known shape just closed (the next
// lorebook entry) is expected to repeat its keys, which are then compared
// as up to three words each and need no sort, its members with plain
// scalar values taken by a short loop of their own; when all of its
// values are plain (an entry's keys array and extensions object too, the
// latter out of order when its shape repeats as well), the whole object
// is, its copies written in the order of its shape and its V2 rules
// checked by its values' kinds. Numbers follow
// ECMAScript (section 3.2.2.3). It equals github.com/gowebpki/jcs byte for
// byte on the RFC 8785 vectors, 10,000 ES6 number lines, every test card and
// in differential and fuzz tests. Parse canonicalizes, checks the V2 rules
// and hashes in one walk and keeps what the Planner needs to diff the
// card without canonicalizing again: its canonical form (one slice with
// its bytes when the card is canonical, one array of exactly their size
// otherwise) or, when the card is canonical up to member order (compact
// JSON with keys out of order, as most exporters write), the copies that
// permute its bytes into that form, built when a patch needs it (about a
// tenth of the card, rather than as much again); results are memoized by
// a 128-bit xxh3 of the input in a bounded, process-wide cache, so
// re-parsing unchanged bytes is about a copy.
//
// The engine canonicalizes numbers with its own JSON library: for
// non-integers, exponents, -0 and integers beyond ±2^53 its hash may differ
// from RFC 8785. [Card.CheckNumbers] names the first such
// number; the planner never sends targetHash for such a card and never
// patches it.
//
// Patches are RFC 6902 with RFC 6901 pointers. [Diff] generates add, remove
// and replace operations from the canonical forms of two cards: equal
// values are equal bytes and members are sorted, so objects merge like
// sorted lists, and the walk skips the documents' common prefix and stops
// at their common suffix (a one-field edit reads little beyond the field).
// Arrays keep their common head and tail and change the middle, so one
// insertion or removal is one operation. Every generated patch is
// verified: applied to the base it must give the target's canonical form
// (whose hash is the target's), or there is no patch; the last splice of
// the verification compares its result with the target instead of
// copying the card. The scans of the base that find where the edit is
// (the containers open there, the end of a large sibling such as the
// lorebook) go 64 bytes at a time with AVX2, in the way of simdjson's
// first stage. (Library generators were considered: gomodules.xyz/jsonpatch
// is correct but writes verbose array diffs; wI2L/jsondiff re-encodes
// numbers through float64 and its Factorize mode emits wrong copy and move
// operations. Both decode into trees of values and add a dependency, while
// the canonical form makes a byte-level diff short and fast.)
// [ApplyPatch] wraps github.com/evanphx/json-patch/v5 with the guards its
// known defects need, checked by a strict applier of our own that works on
// canonical bytes. It passes every enabled case of the json-patch-tests
// suite.
//
// The [Planner] advises a reference when the engine holds exactly this
// card in this session, a verified patch when the engine holds a base we
// agree on and the patch is smaller than the snapshot, and otherwise a
// snapshot, with targetHash only when we trust our hash. The engine's
// reported hash is the authority. After card_resync_required it falls back
// to a snapshot; a refused snapshot with targetHash is retried without it,
// and a refused snapshot without targetHash is a [ResyncError], so a
// caller can never loop (at most three attempts per request).
//
// # Concurrency
//
// Parse, Load, AppendCanonical, Diff, ApplyPatch, Repair and ExtractPNG
// may be called concurrently. A [Card] is immutable and safe for concurrent use. A
// [Planner] is not: it belongs to one session and its owner serializes
// calls. Everything here is synchronous and passive: no goroutines, no
// I/O, no clocks.
//
// # Security
//
// Input size is bounded ([MaxSize]), nesting is bounded (512 levels), copy
// operations in patches cannot grow a document past MaxSize, a panic inside
// evanphx becomes an error, PNG chunk lengths and CRCs are checked, and a
// [Planner] keeps at most [PlannerOptions] MaxKeys characters and MaxBytes
// of their cards. The memo key (xxh3) is not cryptographic: cards come from
// the game itself; the hash sent to the engine is always SHA-256.
package card
