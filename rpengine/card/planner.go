package card

import (
	"bytes"
	"encoding/json"
	"errors"
)

var errNilCard = errors.New("card: planner: nil card")

// Key identifies a character in the engine's card cache.
type Key struct{ IntegrationID, CharacterID string }

// PlannerOptions configures a [Planner]. The zero value is the default.
// The bounds cannot be disabled: a negative one is invalid, which
// rpengine.NewServer reports as a *rpengine.ConfigError; NewPlanner,
// which returns no error, takes it as zero.
type PlannerOptions struct {
	// MaxKeys bounds how many characters the planner remembers. When a new
	// key would exceed it, one remembered key is forgotten, which costs a
	// snapshot for that key later and is otherwise harmless. If zero, 4096.
	MaxKeys int

	// MaxBytes bounds the bytes of accepted cards (and their canonical
	// forms) the planner keeps to patch from, summed over all keys. Past
	// it, the cards of other keys are dropped and only their hashes kept,
	// which costs a snapshot instead of a patch for them later. If zero,
	// 64 MiB.
	MaxBytes int

	// DisablePatches makes the planner choose only snapshots and references.
	DisablePatches bool
}

func (o *PlannerOptions) withDefaults() PlannerOptions {
	var r PlannerOptions
	if o != nil {
		r = *o
	}
	if r.MaxKeys <= 0 {
		r.MaxKeys = 4096
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = 64 << 20
	}
	return r
}

// keyState is what the engine holds for one key, as far as we know.
type keyState struct {
	engineHash Digest // the authority: the hash the engine reported
	card       *Card  // the card it accepted, when the caller told us
}

// Planner chooses the cheapest transfer that can succeed for each card a
// game sends in one session (docs/rpengine-protocol.md, "Cards and
// hashes"). It is per session; not safe for concurrent use (the server
// locks it). It is a passive value: it does
// no I/O and learns only through [Planner.Accepted] and [Planner.Resync].
type Planner struct {
	opts PlannerOptions
	keys map[Key]*keyState
	// distrust holds cards whose hash the engine computes differently from
	// us (a snapshot with targetHash was refused): they are sent without
	// targetHash and never patched.
	distrust map[Digest]struct{}
	bytes    int // sum of keyState.size over keys
}

// NewPlanner returns a planner for a new session. nil opts means defaults.
func NewPlanner(opts *PlannerOptions) *Planner {
	return &Planner{opts: opts.withDefaults(), keys: map[Key]*keyState{}, distrust: map[Digest]struct{}{}}
}

// Reset forgets everything, for a new session: the engine's cache lives
// for one session only.
func (p *Planner) Reset() {
	clear(p.keys)
	clear(p.distrust)
	p.bytes = 0
}

// trusted reports whether c's hash can be sent as targetHash: it is
// hash-safe and the engine has not disagreed with us about it.
func (p *Planner) trusted(c *Card) bool {
	_, bad := p.distrust[c.digest]
	return !c.unsafe && !bad
}

// Plan returns the transfer for card c under key k: a reference when the
// engine holds exactly this card, a verified patch when the engine holds a
// base we agree on and the patch is smaller than the snapshot, otherwise a
// snapshot (with targetHash only when the hash can be trusted). A card
// that fails [Card.Validate] gets its *[ValidationError]: no transfer of it
// can succeed. Plan does not change what the planner believes the engine
// holds; call [Planner.Accepted] when the engine confirms.
func (p *Planner) Plan(k Key, c *Card) (Transfer, error) {
	if c == nil {
		return Transfer{}, errNilCard
	}
	if err := c.Validate(); err != nil {
		return Transfer{}, err // the engine would answer invalid_character_card
	}
	st := p.keys[k]
	if st != nil {
		if st.card != nil && sameCard(st.card, c) {
			h := st.engineHash
			return Transfer{Mode: ModeReference, TargetHash: &h}, nil
		}
		if st.engineHash == c.digest && p.trusted(c) {
			h := c.digest
			return Transfer{Mode: ModeReference, TargetHash: &h}, nil
		}
		if t, ok := p.patch(k, st, c); ok {
			return t, nil
		}
	}
	return p.snapshot(c), nil
}

// sameCard reports whether a and b are the same card. Equal digests
// prove it only for hash-safe cards: RFC 8785 rounds numbers, so a card
// holding 9007199254740993 has the digest of one holding ...992.
func sameCard(a, b *Card) bool {
	if a.digest != b.digest {
		return false
	}
	return (!a.unsafe && !b.unsafe) || bytes.Equal(a.raw, b.raw)
}

func (p *Planner) snapshot(c *Card) Transfer {
	t := Transfer{Mode: ModeSnapshot, Snapshot: c}
	if p.trusted(c) {
		h := c.digest
		t.TargetHash = &h
	}
	return t
}

// patch returns a verified patch transfer from the engine's card to c, if
// one is possible and smaller than the snapshot.
func (p *Planner) patch(k Key, st *keyState, c *Card) (Transfer, bool) {
	if p.opts.DisablePatches || st.card == nil || !p.trusted(c) || !p.trusted(st.card) || st.engineHash != st.card.digest {
		return Transfer{}, false
	}
	target, _ := c.canonical()
	ops, ok := planPatch(st.card, target, len(c.raw))
	if !ok {
		return Transfer{}, false
	}
	h := c.digest
	return Transfer{Mode: ModePatch, BaseHash: st.engineHash, Patch: json.RawMessage(ops), TargetHash: &h}, true
}

// Accepted records that the engine accepted card c for key k with hash h
// (from character.synced.targetHash or reply.accepted.resolvedCardHash).
// The engine's h is the authority: when it differs from c's hash, c is
// referenced by h from then on and never patched. c may be nil when the
// caller does not know which card the engine holds.
func (p *Planner) Accepted(k Key, c *Card, h Digest) {
	st := p.keys[k]
	if st == nil {
		if len(p.keys) >= p.opts.MaxKeys {
			for old := range p.keys {
				p.forget(old)
				break
			}
		}
		st = &keyState{}
		p.keys[k] = st
	}
	p.bytes -= st.card.size()
	st.engineHash, st.card = h, c
	p.bytes += st.card.size()
	p.trim(k)
	if c != nil && c.digest != h {
		p.markDistrust(c.digest)
	}
}

// forget drops everything known about k.
func (p *Planner) forget(k Key) {
	if st := p.keys[k]; st != nil {
		p.bytes -= st.card.size()
		delete(p.keys, k)
	}
}

// trim drops the cards (keeping the hashes) of keys other than keep until
// the kept cards fit in MaxBytes.
func (p *Planner) trim(keep Key) {
	for k, st := range p.keys {
		if p.bytes <= p.opts.MaxBytes {
			return
		}
		if k != keep {
			p.bytes -= st.card.size()
			st.card = nil
		}
	}
}

func (p *Planner) markDistrust(d Digest) {
	if len(p.distrust) >= p.opts.MaxKeys {
		for old := range p.distrust {
			delete(p.distrust, old)
			break
		}
	}
	p.distrust[d] = struct{}{}
}

// Resync is called after card_resync_required for a request that sent t;
// it returns the transfer to retry with (a snapshot, possibly without
// targetHash), or an error (*ResyncError) when no retry can succeed.
//
// The engine forgot or rejected its card for k, so the planner forgets it
// too. A refused reference or patch is retried as a snapshot. A refused
// snapshot that carried targetHash means the engine canonicalizes c
// differently: c is distrusted and retried without targetHash. A refused
// snapshot without targetHash cannot be a hash disagreement, so a retry
// would loop: that is an error.
func (p *Planner) Resync(k Key, c *Card, sent Transfer) (Transfer, error) {
	if c == nil {
		return Transfer{}, errNilCard
	}
	p.forget(k)
	if sent.Mode == ModeSnapshot {
		if sent.TargetHash == nil {
			return Transfer{}, &ResyncError{Key: k, Reason: "the engine refused a snapshot sent without targetHash; a hash disagreement cannot cause that, so resending cannot succeed"}
		}
		p.markDistrust(*sent.TargetHash)
		p.markDistrust(c.digest)
	}
	return p.snapshot(c), nil
}
