package card_test

import (
	"encoding/json"
	"fmt"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// The hash of a small document, as the engine computes it: SHA-256 of its
// RFC 8785 form, 64 lowercase hex digits (docs/rpengine-protocol.md).
func ExampleCard_Hash() {
	c, err := card.Parse([]byte(`{"data":{"age":4,"name":"Ari","tags":["a"]},"spec":"chara_card_v2"}`))
	if err != nil {
		panic(err)
	}
	d := c.Hash()
	fmt.Println(d)
	// Output: 71981de431e9b5327456a39a3eed23fb6eabb68efdd050f271c222f6f50a8b31
}

func ExampleCard_Validate() {
	c, _ := card.Parse([]byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":" "}}`))
	err := c.Validate()
	if ve, ok := err.(*card.ValidationError); ok {
		for _, v := range ve.Violations[:3] {
			fmt.Println(v)
		}
	}
	// Output:
	// /data/description: is required and must be a string
	// /data/personality: is required and must be a string
	// /data/scenario: is required and must be a string
}

func ExampleRepair() {
	v1 := `{"name":"Tom","description":"A fisherman.","first_mes":"Hi.","creatorcomment":"Made for the harbour mod.","tags":"fisher, old"}`
	c, changes, err := card.Repair([]byte(v1))
	fmt.Println("valid:", err == nil, "; name:", c.Name())
	for _, ch := range changes {
		fmt.Println(ch)
	}
	// Output:
	// valid: true ; name: Tom
	// (root): upgraded a V1 card to V2 as SillyTavern imports it: the V1 fields were copied into data and kept at the top level; the other V2 fields start empty
	// /data/creator_notes: copied from the top-level creatorcomment
	// /data/tags: split the top-level string of comma-separated tags into an array
}

// A card as a player downloads it: here a lorebook exported without its
// extensions, which the engine would refuse as it is.
func ExampleLoad() {
	exported := `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"",` +
		`"scenario":"","first_mes":"Hi.","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"",` +
		`"alternate_greetings":[],"tags":[],"creator":"","character_version":"","extensions":{},` +
		`"character_book":{"entries":[]}}}`
	c, notes, err := card.Load([]byte(exported))
	if err != nil {
		fmt.Println("refused:", err) // only what the engine would still refuse
		return
	}
	for _, n := range notes {
		fmt.Println("repaired", n)
	}
	fmt.Println(c.Name(), c.Validate() == nil)
	// Output:
	// repaired /data/character_book/extensions: added missing required field with {}
	// Ari true
}

func ExamplePlanner() {
	base, _, _ := card.Repair([]byte(`{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":""}`))
	key := card.Key{IntegrationID: "mygame", CharacterID: "ari"}
	p := card.NewPlanner(nil)

	t, _ := p.Plan(key, base) // first transfer of a session
	fmt.Println(t.Mode)
	h := base.Hash()
	p.Accepted(key, base, h) // from character.synced.targetHash

	t, _ = p.Plan(key, base) // unchanged card
	fmt.Println(t.Mode)

	b, _ := card.ApplyPatch(base.Bytes(), []byte(`[{"op":"replace","path":"/data/description","value":"Now angry."}]`))
	edited, _ := card.Parse(b)
	t, _ = p.Plan(key, edited)
	wire, _ := json.Marshal(t)
	fmt.Println(t.Mode, string(t.Patch), len(wire) < len(b))
	// Output:
	// snapshot
	// reference
	// patch [{"op":"replace","path":"/data/description","value":"Now angry."}] true
}

func ExampleAppendCanonical() {
	out, _ := card.AppendCanonical(nil, []byte(`{"b": 1.50, "a": "\u20ac", "😂": 1E3, "\ufb33": -0}`))
	fmt.Println(string(out))
	// Output: {"a":"€","b":1.5,"😂":1000,"דּ":0}
}

// A game shows the greeting of a card with its macros replaced, as
// SillyTavern shows it.
func ExampleCard_Data() {
	c, _ := card.New(card.Data{Name: "Ari", FirstMessage: "Halt, {{user}}! <BOT> guards this gate.",
		AlternateGreetings: []string{"{{Char}} waves at {{USER}}."}, Tags: []string{"scout"}})
	d := c.Data()
	fmt.Println(card.Substitute(d.FirstMessage, d.Name, "Sam"))
	for _, g := range d.AlternateGreetings {
		fmt.Println(card.Substitute(g, d.Name, "Sam"))
	}
	fmt.Println(d.Tags)
	// Output:
	// Halt, Sam! Ari guards this gate.
	// Ari waves at Sam.
	// [scout]
}

func ExampleSubstitute() {
	fmt.Println(card.Substitute("{{char}} looks at <USER>.", "Mira", "the new engineer"))
	// Output: Mira looks at the new engineer.
}
