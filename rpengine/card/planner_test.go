package card

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gowebpki/jcs"
)

var (
	keyA = Key{IntegrationID: "game", CharacterID: "a"}
	keyB = Key{IntegrationID: "game", CharacterID: "b"}
)

func digestOf(c *Card) Digest { d := c.Hash(); return d }

func TestPlanner_firstTransferIsSnapshot(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	c := mustParse(t, string(readCard(t, "full.json")))
	tr, err := p.Plan(keyA, c)
	testutil.Success(t, err)
	testutil.Equal(t, "mode", tr.Mode, ModeSnapshot)
	testutil.Equal(t, "snapshot", tr.Snapshot, c)
	testutil.Equal(t, "targetHash", *tr.TargetHash, digestOf(c))

	unsafe := edit(t, c.Bytes(), `[{"op":"add","path":"/data/extensions/w","value":1.5}]`)
	tr, err = p.Plan(keyA, unsafe)
	testutil.Success(t, err)
	testutil.Equal(t, "mode", tr.Mode, ModeSnapshot)
	testutil.Equal(t, "no targetHash for a card that is not hash-safe", tr.TargetHash, (*Digest)(nil))
}

func TestPlanner_referenceAfterAccepted(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	c := mustParse(t, string(readCard(t, "full.json")))
	p.Accepted(keyA, c, digestOf(c))
	tr, _ := p.Plan(keyA, c)
	testutil.Equal(t, "mode", tr.Mode, ModeReference)
	testutil.Equal(t, "target", *tr.TargetHash, digestOf(c))
	// Same bytes parsed again: still a reference.
	tr, _ = p.Plan(keyA, mustParse(t, string(c.Bytes())))
	testutil.Equal(t, "mode after reparse", tr.Mode, ModeReference)
	// Another key, or a new session: snapshot.
	tr, _ = p.Plan(keyB, c)
	testutil.Equal(t, "other key", tr.Mode, ModeSnapshot)
	p.Reset()
	tr, _ = p.Plan(keyA, c)
	testutil.Equal(t, "after reset", tr.Mode, ModeSnapshot)
}

func TestPlanner_acceptedWithoutCard(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	c := mustParse(t, string(readCard(t, "minimal.json")))
	p.Accepted(keyA, nil, digestOf(c)) // e.g. from reply.accepted.resolvedCardHash only
	tr, _ := p.Plan(keyA, c)
	testutil.Equal(t, "reference by hash", tr.Mode, ModeReference)
	other := edit(t, c.Bytes(), `[{"op":"replace","path":"/data/name","value":"Bo"}]`)
	tr, _ = p.Plan(keyA, other)
	testutil.Equal(t, "no base card to patch from", tr.Mode, ModeSnapshot)
}

func TestPlanner_patchOneField(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	base := mustParse(t, string(readCard(t, "lorebook-200.json")))
	p.Accepted(keyA, base, digestOf(base))
	target := edit(t, base.Bytes(), `[{"op":"replace","path":"/data/character_book/entries/17/content","value":"Changed / ~ \"quoted\" é"}]`)
	tr, err := p.Plan(keyA, target)
	testutil.Success(t, err)
	testutil.Equal(t, "mode", tr.Mode, ModePatch)
	testutil.Equal(t, "base", tr.BaseHash, digestOf(base))
	testutil.Equal(t, "target", *tr.TargetHash, digestOf(target))
	testutil.Equal(t, "patch", string(tr.Patch), `[{"op":"replace","path":"/data/character_book/entries/17/content","value":"Changed / ~ \"quoted\" é"}]`)
	// The patch, applied by evanphx behind the wrapper, gives the target.
	out, err := ApplyPatch(base.Bytes(), tr.Patch)
	testutil.Success(t, err)
	d := Digest(sha256.Sum256(out))
	testutil.Equal(t, "applied", d, digestOf(target))
	// The descriptor on the wire.
	wire, err := json.Marshal(tr)
	testutil.Success(t, err)
	var m map[string]any
	testutil.Success(t, json.Unmarshal(wire, &m))
	testutil.Equal(t, "format", m["format"], any("chara_card_v2"))
	testutil.Equal(t, "wire mode", m["mode"], any("patch"))
	testutil.Equal(t, "baseHash", m["baseHash"], any(digestOf(base).String()))
	testutil.Equal(t, "targetHash", m["targetHash"], any(digestOf(target).String()))
}

func TestPlanner_snapshotWhenPatchIsNotSmaller(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	base := mustParse(t, string(readCard(t, "minimal.json")))
	p.Accepted(keyA, base, digestOf(base))
	var ops []string
	for _, f := range requiredStrings {
		ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"/data/%s","value":"%s"}`, f, f[:2]))
	}
	target := edit(t, base.Bytes(), "["+strings.Join(ops, ",")+"]")
	patch, err := Diff(base, target)
	testutil.Success(t, err)
	if len(patch) < len(target.Bytes()) {
		t.Fatalf("test premise: patch of %d bytes is smaller than the %d-byte snapshot", len(patch), len(target.Bytes()))
	}
	tr, _ := p.Plan(keyA, target)
	testutil.Equal(t, "mode", tr.Mode, ModeSnapshot)
}

func TestPlanner_noPatchForUnsafeCards(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	base := mustParse(t, string(readCard(t, "full.json")))
	p.Accepted(keyA, base, digestOf(base))
	target := edit(t, base.Bytes(), `[{"op":"add","path":"/data/extensions/weight","value":1.5}]`)
	tr, _ := p.Plan(keyA, target)
	testutil.Equal(t, "mode", tr.Mode, ModeSnapshot)
	testutil.Equal(t, "targetHash", tr.TargetHash, (*Digest)(nil))

	p2 := NewPlanner(&PlannerOptions{DisablePatches: true})
	p2.Accepted(keyA, base, digestOf(base))
	target = edit(t, base.Bytes(), `[{"op":"replace","path":"/data/name","value":"Mira"}]`)
	tr, _ = p2.Plan(keyA, target)
	testutil.Equal(t, "patches disabled", tr.Mode, ModeSnapshot)
}

func TestPlanner_Resync(t *testing.T) {
	t.Parallel()
	base := mustParse(t, string(readCard(t, "full.json")))
	target := edit(t, base.Bytes(), `[{"op":"replace","path":"/data/name","value":"Mira"}]`)
	p := NewPlanner(nil)
	p.Accepted(keyA, base, digestOf(base))
	sent, _ := p.Plan(keyA, target)
	testutil.Equal(t, "patch first", sent.Mode, ModePatch)

	retry, err := p.Resync(keyA, target, sent)
	testutil.Success(t, err)
	testutil.Equal(t, "patch refused: snapshot", retry.Mode, ModeSnapshot)
	testutil.Equal(t, "with targetHash", *retry.TargetHash, digestOf(target))
	again, _ := p.Plan(keyA, target)
	testutil.Equal(t, "engine's card forgotten", again.Mode, ModeSnapshot)

	retry2, err := p.Resync(keyA, target, retry)
	testutil.Success(t, err)
	testutil.Equal(t, "snapshot with targetHash refused: snapshot", retry2.Mode, ModeSnapshot)
	testutil.Equal(t, "without targetHash", retry2.TargetHash, (*Digest)(nil))
	plan, _ := p.Plan(keyB, target)
	testutil.Equal(t, "distrusted everywhere in the session", plan.TargetHash, (*Digest)(nil))

	_, err = p.Resync(keyA, target, retry2)
	var re *ResyncError
	testutil.ErrorAs(t, err, &re)
	testutil.Equal(t, "key", re.Key, keyA)

	// A reference refused: snapshot.
	p.Accepted(keyB, base, digestOf(base))
	ref, _ := p.Plan(keyB, base)
	testutil.Equal(t, "reference", ref.Mode, ModeReference)
	retry, _ = p.Resync(keyB, base, ref)
	testutil.Equal(t, "reference refused", retry.Mode, ModeSnapshot)
	testutil.Equal(t, "reference refused: targetHash", *retry.TargetHash, digestOf(base))
}

func TestPlanner_engineIsAuthority(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	c := mustParse(t, string(readCard(t, "full.json")))
	engineHash := Digest{1, 2, 3}
	p.Accepted(keyA, c, engineHash) // the engine reported another hash
	tr, _ := p.Plan(keyA, c)
	testutil.Equal(t, "reference", tr.Mode, ModeReference)
	testutil.Equal(t, "by the engine's hash", *tr.TargetHash, engineHash)
	next := edit(t, c.Bytes(), `[{"op":"replace","path":"/data/name","value":"Mira"}]`)
	tr, _ = p.Plan(keyA, next)
	testutil.Equal(t, "no patch from a base we disagree on", tr.Mode, ModeSnapshot)
	tr, _ = p.Plan(keyB, c)
	testutil.Equal(t, "never our hash for that card again", tr.TargetHash, (*Digest)(nil))
}

func TestPlanner_nilCard(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	_, err := p.Plan(keyA, nil)
	testutil.Error(t, err)
	_, err = p.Plan(keyA, mustParse(t, string(readCard(t, "v1.json"))))
	var ve *ValidationError
	testutil.ErrorAs(t, err, &ve)
	_, err = p.Resync(keyA, nil, Transfer{})
	testutil.Error(t, err)
}

func TestPlanner_maxKeys(t *testing.T) {
	t.Parallel()
	p := NewPlanner(&PlannerOptions{MaxKeys: 3})
	c := mustParse(t, string(readCard(t, "minimal.json")))
	for i := 0; i < 10; i++ {
		p.Accepted(Key{"g", strconv.Itoa(i)}, c, digestOf(c))
	}
	testutil.Equal(t, "bounded", len(p.keys), 3)
	tr, _ := p.Plan(Key{"g", "9"}, c)
	testutil.Equal(t, "latest kept", tr.Mode, ModeReference)
}

func TestTransfer_MarshalJSON(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"spec":"chara_card_v2","data":{}}`)
	d := digestOf(c)
	tests := []struct {
		name string
		tr   Transfer
		want string
	}{
		{"snapshot", Transfer{Mode: ModeSnapshot, Snapshot: c, TargetHash: &d}, `{"format":"chara_card_v2","mode":"snapshot","snapshot":{"spec":"chara_card_v2","data":{}},"targetHash":"` + d.String() + `"}`},
		{"snapshot without hash", Transfer{Mode: ModeSnapshot, Snapshot: c}, `{"format":"chara_card_v2","mode":"snapshot","snapshot":{"spec":"chara_card_v2","data":{}}}`},
		{"reference", Transfer{Mode: ModeReference, TargetHash: &d}, `{"format":"chara_card_v2","mode":"reference","targetHash":"` + d.String() + `"}`},
		{"patch", Transfer{Mode: ModePatch, BaseHash: d, Patch: json.RawMessage(`[]`), TargetHash: &d}, `{"format":"chara_card_v2","mode":"patch","baseHash":"` + d.String() + `","patch":[],"targetHash":"` + d.String() + `"}`},
		{"reference without hash", Transfer{Mode: ModeReference}, ""},
		{"snapshot without card", Transfer{Mode: ModeSnapshot}, ""},
		{"patch without patch", Transfer{Mode: ModePatch, TargetHash: &d}, ""},
		{"bad mode", Transfer{Mode: 9, TargetHash: &d}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.tr)
			if tt.want == "" {
				testutil.Error(t, err)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "json", string(got), tt.want)
		})
	}
}

// fakeEngine follows spec section 4.3 with an independent canonicalizer
// (gowebpki/jcs) and evanphx behind ApplyPatch; skew makes it hash every
// card differently from us, like an engine whose number printing differs.
type fakeEngine struct {
	cache map[Key][]byte // the engine's card per key
	skew  bool
	sent  map[Mode]int
}

var errResync = errors.New("card_resync_required")

func (e *fakeEngine) hash(doc []byte) Digest {
	c, err := jcs.Transform(doc)
	if err != nil {
		panic(err)
	}
	if e.skew {
		c = append(c, '!')
	}
	return sha256.Sum256(c)
}

func (e *fakeEngine) receive(k Key, tr Transfer) (Digest, error) {
	e.sent[tr.Mode]++
	var doc []byte
	switch tr.Mode {
	case ModeSnapshot:
		doc = tr.Snapshot.Bytes()
	case ModeReference:
		cached, ok := e.cache[k]
		if !ok || e.hash(cached) != *tr.TargetHash {
			return Digest{}, errResync
		}
		return e.hash(cached), nil
	case ModePatch:
		cached, ok := e.cache[k]
		if !ok || e.hash(cached) != tr.BaseHash {
			return Digest{}, errResync
		}
		out, err := ApplyPatch(cached, tr.Patch)
		if err != nil {
			return Digest{}, errResync
		}
		doc = out
	}
	h := e.hash(doc)
	if tr.TargetHash != nil && *tr.TargetHash != h {
		return Digest{}, errResync
	}
	e.cache[k] = doc
	return h, nil
}

// send is what the server does: plan, send, and on card_resync_required
// retry with Resync until it succeeds or errors. It reports the attempts.
func send(t *testing.T, p *Planner, e *fakeEngine, k Key, c *Card) int {
	t.Helper()
	tr, err := p.Plan(k, c)
	testutil.Success(t, err)
	for attempt := 1; ; attempt++ {
		if attempt > 3 {
			t.Fatalf("more than 3 attempts: the planner loops")
		}
		h, err := e.receive(k, tr)
		if err == nil {
			p.Accepted(k, c, h)
			return attempt
		}
		tr, err = p.Resync(k, c, tr)
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
	}
}

// TestPlanner_fakeEngine drives the planner through random edits of real
// sized cards against a fake engine and checks that every transfer it
// advises succeeds at once (or, with a skewed engine, on the single retry
// without targetHash), and that patches and references are used.
func TestPlanner_fakeEngine(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, skew := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(seed, 1))
		p := NewPlanner(nil)
		e := &fakeEngine{cache: map[Key][]byte{}, skew: skew, sent: map[Mode]int{}}
		cards := map[Key]*Card{
			keyA: mustParse(t, string(readCard(t, "full.json"))),
			keyB: mustParse(t, string(readCard(t, "lorebook-200.json"))),
		}
		steps := scaled(60)
		prev := keyA
		for step := 0; step < steps; step++ {
			// Steps 3 and 4 of every 5 edit, then resend unchanged, the
			// previous step's card: a patch and a reference are certain.
			k := prev
			if step%5 < 3 && rng.IntN(2) == 1 {
				k = keyB
			} else if step%5 < 3 {
				k = keyA
			}
			prev = k
			if step%5 == 3 || (step%5 < 3 && rng.IntN(4) > 0) {
				cards[k] = randomEdit(t, rng, cards[k])
			}
			if step == steps/2 {
				p.Reset()
				clear(e.cache) // new session
			}
			attempts := send(t, p, e, k, cards[k])
			if !skew && attempts != 1 {
				t.Fatalf("step %d: %d attempts against an agreeing engine", step, attempts)
			}
		}
		t.Logf("skew=%v transfers: %v", skew, e.sent)
		if !skew && (e.sent[ModePatch] == 0 || e.sent[ModeReference] == 0) {
			t.Fatalf("patches and references unused: %v", e.sent)
		}
		if skew && e.sent[ModePatch] != 0 {
			t.Fatalf("patched a card the engine hashes differently: %v", e.sent)
		}
	}
}

// randomEdit changes, adds or removes something in a card.
func randomEdit(t *testing.T, rng *rand.Rand, c *Card) *Card {
	var op string
	switch rng.IntN(6) {
	case 0:
		op = fmt.Sprintf(`{"op":"replace","path":"/data/description","value":"desc %d ✨"}`, rng.Int())
	case 1:
		op = fmt.Sprintf(`{"op":"add","path":"/data/tags/0","value":"t%d"}`, rng.IntN(100))
	case 2:
		op = fmt.Sprintf(`{"op":"add","path":"/data/extensions/k%d","value":{"v":[%d,"x"]}}`, rng.IntN(5), rng.IntN(1000))
	case 3:
		op = fmt.Sprintf(`{"op":"replace","path":"/data/character_book/entries/%d/content","value":"c%d"}`, rng.IntN(2), rng.Int())
	case 4:
		op = `{"op":"remove","path":"/data/alternate_greetings"},{"op":"add","path":"/data/alternate_greetings","value":[]}`
	default:
		op = fmt.Sprintf(`{"op":"replace","path":"/data/name","value":"N%d"}`, rng.IntN(3))
	}
	out, err := ApplyPatch(c.Bytes(), []byte("["+op+"]"))
	testutil.Success(t, err)
	n, err := Parse(out)
	testutil.Success(t, err)
	return n
}

// scaled shortens randomized tests under the race detector, which makes
// jcs and evanphx many times slower; the plain run keeps full coverage.
func scaled(n int) int {
	if testutil.RaceEnabled {
		return max(n/5, 10)
	}
	return n
}

// TestPlanner_hashSafety: an equal hash proves nothing about a card that
// is not hash-safe (RFC 8785 rounds 9007199254740993 to ...992, so two
// different cards share a digest), so such a card is never referenced by
// its own hash, nor patched from or to.
func TestPlanner_hashSafety(t *testing.T) {
	t.Parallel()
	safe := mustParse(t, string(readCard(t, "full.json")))
	twin := edit(t, safe.Bytes(), `[{"op":"add","path":"/data/extensions/id","value":9007199254740992}]`)
	// edit returns canonical JSON, which would round the literal: write it.
	unsafe := mustParse(t, strings.Replace(string(twin.Bytes()), "9007199254740992", "9007199254740993", 1))
	testutil.Error(t, unsafe.CheckNumbers())
	testutil.Equal(t, "test premise: same digest", digestOf(unsafe), digestOf(twin))

	p := NewPlanner(nil)
	p.Accepted(keyA, nil, digestOf(twin)) // the engine holds the twin
	tr, err := p.Plan(keyA, unsafe)
	testutil.Success(t, err)
	testutil.Equal(t, "not a reference to the twin", tr.Mode, ModeSnapshot)
	testutil.Equal(t, "no targetHash", tr.TargetHash, (*Digest)(nil))

	// The engine holds the unsafe card (its own hash for it): the twin,
	// with our same digest, is another card, so not a reference to it.
	p.Accepted(keyA, unsafe, Digest{7})
	tr, err = p.Plan(keyA, twin)
	testutil.Success(t, err)
	testutil.Equal(t, "the twin is not the engine's card", tr.Mode, ModeSnapshot)
	tr, err = p.Plan(keyA, mustParse(t, string(unsafe.Bytes())))
	testutil.Success(t, err)
	testutil.Equal(t, "the same bytes are", tr.Mode, ModeReference)
	testutil.Equal(t, "by the engine's hash", *tr.TargetHash, Digest{7})

	p.Accepted(keyA, unsafe, digestOf(unsafe)) // even when the engine agreed on its hash
	next := edit(t, unsafe.Bytes(), `[{"op":"remove","path":"/data/extensions/id"}]`)
	testutil.Success(t, next.CheckNumbers())
	tr, err = p.Plan(keyA, next)
	testutil.Success(t, err)
	testutil.Equal(t, "no patch from an unsafe base", tr.Mode, ModeSnapshot)
	testutil.Equal(t, "the safe target keeps its targetHash", *tr.TargetHash, digestOf(next))
}

// TestPlanner_Reset: a new session may be a different
// engine, so a hash disagreement learned in the last one is forgotten.
func TestPlanner_Reset(t *testing.T) {
	t.Parallel()
	p := NewPlanner(nil)
	c := mustParse(t, string(readCard(t, "full.json")))
	sent, _ := p.Plan(keyA, c)
	retry, err := p.Resync(keyA, c, sent)
	testutil.Success(t, err)
	testutil.Equal(t, "distrusted", retry.TargetHash, (*Digest)(nil))
	p.Reset()
	tr, _ := p.Plan(keyA, c)
	testutil.Equal(t, "trusted again after Reset", *tr.TargetHash, digestOf(c))
}

// TestPlanner_distrustBounded: the set of distrusted digests is bounded by
// MaxKeys like the keys themselves.
func TestPlanner_distrustBounded(t *testing.T) {
	t.Parallel()
	p := NewPlanner(&PlannerOptions{MaxKeys: 3})
	base := mustParse(t, string(readCard(t, "minimal.json")))
	for i := 0; i < 10; i++ {
		c := edit(t, base.Bytes(), fmt.Sprintf(`[{"op":"replace","path":"/data/name","value":"N%d"}]`, i))
		p.Accepted(keyA, c, Digest{byte(i)}) // the engine disagrees every time
	}
	testutil.Equal(t, "bounded", len(p.distrust), 3)
}

// TestPlanner_maxBytes: the cards kept to patch from are bounded in bytes;
// a key whose card was dropped costs a snapshot, never a wrong transfer,
// and the latest accepted card is kept.
func TestPlanner_maxBytes(t *testing.T) {
	t.Parallel()
	base := mustParse(t, string(readCard(t, "full.json")))
	p := NewPlanner(&PlannerOptions{MaxBytes: 3 * len(base.Bytes())})
	check := func(when string) {
		t.Helper()
		sum := 0
		for _, st := range p.keys {
			sum += st.card.size()
		}
		testutil.Equal(t, when+": bytes accounted", p.bytes, sum)
		if p.bytes > p.opts.MaxBytes {
			t.Fatalf("%s: %d bytes kept, limit %d", when, p.bytes, p.opts.MaxBytes)
		}
	}
	rename := func(c *Card, name string) *Card {
		return edit(t, c.Bytes(), `[{"op":"replace","path":"/data/name","value":"`+name+`"}]`)
	}
	for i := 0; i < 5; i++ {
		k := Key{"g", strconv.Itoa(i)}
		c := rename(base, "N"+strconv.Itoa(i))
		p.Accepted(k, c, digestOf(c))
		check("accepted " + k.CharacterID)
		tr, err := p.Plan(k, rename(c, "M"))
		testutil.Success(t, err)
		testutil.Equal(t, "the latest card is kept: patch", tr.Mode, ModePatch)
		check("planned " + k.CharacterID)
	}
	dropped := 0
	for i := 0; i < 5; i++ {
		k := Key{"g", strconv.Itoa(i)}
		c := rename(base, "N"+strconv.Itoa(i))
		tr, _ := p.Plan(k, c)
		testutil.Equal(t, "the hash is kept: reference", tr.Mode, ModeReference)
		if tr, _ = p.Plan(k, rename(c, "M")); tr.Mode == ModeSnapshot {
			dropped++
			testutil.Equal(t, "a dropped card's target keeps its hash", *tr.TargetHash, digestOf(rename(c, "M")))
		}
	}
	if dropped == 0 {
		t.Fatal("no card was dropped")
	}
	sent, _ := p.Plan(Key{"g", "4"}, rename(base, "X"))
	_, err := p.Resync(Key{"g", "4"}, rename(base, "X"), sent)
	testutil.Success(t, err)
	check("resync")
	p.Reset()
	check("reset")
	testutil.Equal(t, "nothing after reset", p.bytes, 0)
}
