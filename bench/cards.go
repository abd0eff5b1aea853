package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Card is a generated benchmark card.
type Card struct {
	Name string // small, typical, large
	JSON []byte
}

// NonceLen is the width of the "bench_nonce" string in every generated
// card's data.extensions: benchmarks of the cold path rewrite its digits
// so that each hash sees bytes it never saw, at no cost.
const NonceLen = 12

// Cards returns the three benchmark cards, generated deterministically:
// small (~2 KB, no lorebook), typical (~10 KB, 12-entry lorebook) and
// large (~1 MB, 2000-entry lorebook). Keys are in a non-canonical order
// and the text has escapes and non-ASCII, as real exports do.
func Cards() []Card {
	return []Card{
		{"small", genCard(1, 1400, 0)},
		{"typical", genCard(2, 3000, 12)},
		{"large", genCard(3, 6000, 2000)},
	}
}

var words = strings.Fields(`the fox ran through a quiet forest while rain fell
on old stones and lanterns glowed "softly" near the river; café naïve 東京 —
she said: hello\traveller, the gate is north`)

func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// genCard builds a Character Card V2 with desc bytes of prose spread over
// its fields and entries lorebook entries of about 480 bytes each.
func genCard(seed uint64, desc, entries int) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	type entry struct {
		Keys           []string       `json:"keys"`
		Content        string         `json:"content"`
		Extensions     map[string]any `json:"extensions"`
		Enabled        bool           `json:"enabled"`
		InsertionOrder int            `json:"insertion_order"`
		CaseSensitive  bool           `json:"case_sensitive"`
		Name           string         `json:"name"`
		Priority       int            `json:"priority"`
		ID             int            `json:"id"`
		Comment        string         `json:"comment"`
		Selective      bool           `json:"selective"`
		SecondaryKeys  []string       `json:"secondary_keys"`
		Constant       bool           `json:"constant"`
		Position       string         `json:"position"`
	}
	type book struct {
		Name              string         `json:"name"`
		Description       string         `json:"description"`
		ScanDepth         int            `json:"scan_depth"`
		TokenBudget       int            `json:"token_budget"`
		RecursiveScanning bool           `json:"recursive_scanning"`
		Extensions        map[string]any `json:"extensions"`
		Entries           []entry        `json:"entries"`
	}
	type data struct {
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
		CharacterBook           *book          `json:"character_book,omitempty"`
	}
	d := data{
		Name: "Ari", Description: text(r, desc/2), Personality: text(r, desc/8),
		Scenario: text(r, desc/8), FirstMes: text(r, desc/8), MesExample: text(r, desc/8),
		CreatorNotes: "generated for benchmarks", SystemPrompt: "", PostHistoryInstructions: "",
		AlternateGreetings: []string{text(r, 80), text(r, 80)}, Tags: []string{"fox", "forest", "bench"},
		Creator: "gamelink bench", CharacterVersion: "1",
		Extensions: map[string]any{"bench_nonce": strings.Repeat("0", NonceLen), "depth_prompt": map[string]any{"depth": 4, "prompt": text(r, 60)}},
	}
	if entries > 0 {
		b := &book{Name: "World", Description: text(r, 100), ScanDepth: 4, TokenBudget: 2048, Extensions: map[string]any{}}
		for i := range entries {
			b.Entries = append(b.Entries, entry{
				Keys: []string{fmt.Sprintf("place%d", i), text(r, 10)}, Content: text(r, 250),
				Extensions: map[string]any{"weight": i % 7}, Enabled: true, InsertionOrder: i,
				Name: fmt.Sprintf("entry %d", i), Priority: i % 10, ID: i, Comment: text(r, 20),
				SecondaryKeys: []string{}, Position: "before_char",
			})
		}
		d.CharacterBook = b
	}
	out, err := json.Marshal(struct {
		Spec        string `json:"spec"`
		SpecVersion string `json:"spec_version"`
		Data        data   `json:"data"`
	}{"chara_card_v2", "2.0", d})
	if err != nil {
		panic(err) // static types: cannot fail
	}
	return out
}

// SetNonce writes n into the card's bench_nonce digits, in place.
func SetNonce(card []byte, at int, n uint64) {
	for i := at + NonceLen - 1; i >= at; i-- {
		card[i] = byte('0' + n%10)
		n /= 10
	}
}

// NonceAt returns the offset of the bench_nonce digits in card.
func NonceAt(card []byte) int {
	key := []byte(`"bench_nonce":"`)
	for i := 0; i+len(key) <= len(card); i++ {
		if string(card[i:i+len(key)]) == string(key) {
			return i + len(key)
		}
	}
	return -1
}
