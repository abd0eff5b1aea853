package card

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// compactCard returns a card as most exporters write it: compact JSON
// (encoding/json of structs), keys out of order, entries lorebook entries.
func compactCard(tb testing.TB, entries int) []byte {
	tb.Helper()
	type entry struct {
		Keys           []string       `json:"keys"`
		Content        string         `json:"content"`
		Extensions     map[string]any `json:"extensions"`
		Enabled        bool           `json:"enabled"`
		InsertionOrder int            `json:"insertion_order"`
		Name           string         `json:"name"`
		ID             int            `json:"id"`
	}
	var es []entry
	for i := range entries {
		es = append(es, entry{Keys: []string{fmt.Sprintf("place%d", i)}, Content: strings.Repeat("a café by the river, \"quiet\" — ", 16),
			Extensions: map[string]any{"weight": i % 7}, Enabled: true, InsertionOrder: i, Name: fmt.Sprintf("entry %d", i), ID: i})
	}
	type book struct {
		Name       string         `json:"name"`
		Extensions map[string]any `json:"extensions"`
		Entries    []entry        `json:"entries"`
	}
	doc, err := json.Marshal(map[string]any{"spec": "chara_card_v2", "spec_version": "2.0", "data": struct {
		Name                    string         `json:"name"`
		Description             string         `json:"description"`
		Personality             string         `json:"personality"`
		Scenario                string         `json:"scenario"`
		FirstMes                string         `json:"first_mes"`
		MesExample              string         `json:"mes_example"`
		CreatorNotes            string         `json:"creator_notes"`
		SystemPrompt            string         `json:"system_prompt"`
		PostHistoryInstructions string         `json:"post_history_instructions"`
		AlternateGreetings      []string       `json:"alternate_greetings"`
		Tags                    []string       `json:"tags"`
		Creator                 string         `json:"creator"`
		CharacterVersion        string         `json:"character_version"`
		Extensions              map[string]any `json:"extensions"`
		CharacterBook           book           `json:"character_book"`
	}{Name: "Ari", Description: "a fox", AlternateGreetings: []string{}, Tags: []string{"fox"}, Extensions: map[string]any{},
		CharacterBook: book{Name: "World", Extensions: map[string]any{}, Entries: es}}})
	testutil.Success(tb, err)
	return doc
}

// TestParse_keepsCopiesNotForm checks the layout of a card whose source is
// canonical up to member order: Parse keeps the source and the copies
// that permute it (not a second copy of the form), and the form they
// build is the canonical one. Issue #24.
func TestParse_keepsCopiesNotForm(t *testing.T) {
	t.Parallel()
	doc := compactCard(t, 50)
	c, err := Parse(append([]byte(nil), doc...))
	testutil.Success(t, err)
	testutil.Equal(t, "canonical form kept", c.canon == nil, true)
	testutil.Equal(t, "copies kept", len(c.ops) > 0, true)
	want, err := AppendCanonical(nil, doc)
	testutil.Success(t, err)
	testutil.Equal(t, "form built from the copies", bytes.Equal(c.canonical(), want), true)
	// The copies follow the card's bytes in the same array, aligned.
	at := uintptr(unsafe.Pointer(&c.ops[0])) - uintptr(unsafe.Pointer(unsafe.SliceData(c.Bytes())))
	testutil.Equal(t, "copies after the bytes", at >= uintptr(len(doc)) && at < uintptr(len(doc))+unsafe.Alignof(c.ops[0]), true)
	testutil.Equal(t, "copies aligned", at%unsafe.Alignof(c.ops[0]), 0)
	testutil.Equal(t, "size", c.size(), len(doc)+int(at)+8*len(c.ops))

	// A canonical source is one array; one with white space keeps both.
	c = mustParse(t, string(want))
	testutil.Equal(t, "canonical source shared", &c.canonical()[0] == &c.Bytes()[0], true)
	spaced := mustParse(t, `{ "b": 1, "a": 2 }`)
	testutil.Equal(t, "form of a spaced source", string(spaced.canon), `{"a":2,"b":1}`)
	testutil.Equal(t, "no copies", spaced.ops == nil, true)
}

// TestParse_allocatesUnderTwiceTheCard pins the memory a cold Parse of a
// large compact card allocates: under twice its size (it was its bytes
// and its canonical form, rounded up to whole pages: 2.006 times).
// Not parallel, so that MemStats.TotalAlloc counts this test alone.
// Issue #24.
func TestParse_allocatesUnderTwiceTheCard(t *testing.T) {
	testutil.SkipAllocs(t)
	doc := compactCard(t, 1500) // about 1 MB
	const runs = 5
	at := bytes.Index(doc, []byte("a fox")) + 4
	if _, err := Parse(doc); err != nil { // the pooled scratch grows once
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := range runs {
		doc[at] = 'a' + byte(i) // new bytes: the memo misses
		if _, err := Parse(doc); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	per := float64(m1.TotalAlloc-m0.TotalAlloc) / runs
	t.Logf("%.0f bytes a parse, %.3f times the card's %d", per, per/float64(len(doc)), len(doc))
	if per >= 2*float64(len(doc)) {
		t.Errorf("a parse allocates %.0f bytes, %.3f times the card: want under twice", per, per/float64(len(doc)))
	}
}

// Test_hashMemo_table checks the memo's sets against a model of maps
// and per-set FIFO queues: keys crowd into a few sets, so that their
// entries are replaced over and over, and some are removed (what the
// benchmarks' drop does) from the middle of a full set. Issue #24.
func Test_hashMemo_table(t *testing.T) {
	t.Parallel()
	testutil.Equal(t, "set size", unsafe.Sizeof(memoSet{}), uintptr(256))
	seed := uint64(8192)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	var h hashMemo
	ref := map[memoKey128]memoEntry{}
	order := map[uint64][]memoKey128{} // per set, oldest first
	sets := []uint64{0, 1, 2, memoSets - 2, memoSets - 1, 77}
	var keys []memoKey128
	for range 3 * memoEntries {
		k := memoKey128{Lo: sets[r.IntN(len(sets))] | uint64(r.IntN(1<<20))<<13, Hi: r.Uint64()}
		if r.IntN(4) == 0 {
			k.Lo = r.Uint64() // and some spread ones
		}
		keys = append(keys, k)
	}
	for step := range 40000 {
		k := keys[r.IntN(len(keys))]
		set := k.Lo & (memoSets - 1)
		switch r.IntN(8) {
		case 0:
			h.remove(k)
			if _, ok := ref[k]; ok {
				delete(ref, k)
				o := order[set]
				i := slices.Index(o, k)
				order[set] = append(o[:i:i], o[i+1:]...)
			}
		case 1, 2, 3, 4:
			e := memoEntry{digest: Digest{byte(step), byte(step >> 8)}, valid: true}
			h.put(k, e)
			if _, ok := ref[k]; !ok {
				if o := order[set]; len(o) == memoWays {
					delete(ref, o[0])
					order[set] = o[1:]
				}
				ref[k] = e
				order[set] = append(order[set], k)
			}
		}
		got, gok := h.get(k)
		want, wok := ref[k]
		if gok != wok || got != want {
			t.Fatalf("step %d: key %v: table %v %v, model %v %v", step, k, got, gok, want, wok)
		}
	}
	testutil.Equal(t, "entries", h.len(), len(ref))
	for k, want := range ref {
		if got, ok := h.get(k); !ok || got != want {
			t.Fatalf("key %v: table %v %v, model %v", k, got, ok, want)
		}
	}
}

// TestCard_concurrentFirstUse calls what a card computes on first use
// (its canonical form, its violations, its name) from many goroutines at
// once: each sees the same, once made (run with -race). Issue #24.
func TestCard_concurrentFirstUse(t *testing.T) {
	t.Parallel()
	testutil.Equal(t, "card size", unsafe.Sizeof(Card{}) <= 128, true)
	doc := compactCard(t, 3)
	want, err := AppendCanonical(nil, doc)
	testutil.Success(t, err)
	bad := []byte(`{"spec":"chara_card_v2","data":{"name":7},"spec_version":"2.0"}`)
	mustParse(t, string(bad)) // so that the second Parse finds it in the memo
	for range 20 {
		c, err := Parse(doc)
		testutil.Success(t, err)
		b, err := Parse(bad)
		testutil.Success(t, err)
		var wg sync.WaitGroup
		forms := make([][]byte, 8)
		errs := make([]error, 8)
		names := make([]string, 8)
		for i := range 8 {
			wg.Go(func() {
				forms[i], errs[i], names[i] = c.canonical(), b.Validate(), c.Name()
			})
		}
		wg.Wait()
		for i := range 8 {
			testutil.Equal(t, "form", string(forms[i]), string(want))
			testutil.Equal(t, "same form", &forms[i][0], &forms[0][0])
			testutil.Equal(t, "violations", errs[i].Error(), errs[0].Error())
			testutil.Equal(t, "name", names[i], "Ari")
		}
	}
}
