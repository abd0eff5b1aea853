package card

import (
	"encoding/json"

	"github.com/gamelink-go/gamelink/internal/errd"
)

// Data is a character as Go values: the data object of a Character Card
// V2. [New] makes a card of it. A zero field is the empty value the
// format requires there (an empty string, list or object), so a card
// needs only its Name; every other field is there to be filled in. A
// lorebook (character_book) or any field the format does not name needs
// the card's JSON and [Parse].
type Data struct {
	Name                    string   // required: the character's name, {{char}} in the other fields
	Description             string   // who the character is
	Personality             string   // a summary of the personality
	Scenario                string   // the situation the conversation starts in
	FirstMessage            string   // first_mes: the greeting
	MessageExamples         string   // mes_example: example dialogue
	CreatorNotes            string   // notes for people, not the model
	SystemPrompt            string   // replaces the engine's system prompt when set
	PostHistoryInstructions string   // instructions after the conversation history
	AlternateGreetings      []string // other greetings
	Tags                    []string
	Creator                 string
	CharacterVersion        string
	// Extensions holds extension data by name, as encoding/json
	// marshals it; nil is an empty object.
	Extensions map[string]any
}

// dataJSON is Data with the format's member names.
type dataJSON struct {
	Name                    string         `json:"name"`
	Description             string         `json:"description"`
	Personality             string         `json:"personality"`
	Scenario                string         `json:"scenario"`
	FirstMessage            string         `json:"first_mes"`
	MessageExamples         string         `json:"mes_example"`
	CreatorNotes            string         `json:"creator_notes"`
	SystemPrompt            string         `json:"system_prompt"`
	PostHistoryInstructions string         `json:"post_history_instructions"`
	AlternateGreetings      []string       `json:"alternate_greetings"`
	Tags                    []string       `json:"tags"`
	Creator                 string         `json:"creator"`
	CharacterVersion        string         `json:"character_version"`
	Extensions              map[string]any `json:"extensions"`
}

// New returns the Character Card V2 holding d. The card is valid: what
// [Card.Validate] would refuse (a blank Name) is its *[ValidationError],
// and extension data encoding/json cannot marshal is an error too.
func New(d Data) (_ *Card, err error) {
	defer errd.Wrap(&err, "card: new")
	j := dataJSON(d)
	if j.AlternateGreetings == nil {
		j.AlternateGreetings = []string{}
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if j.Extensions == nil {
		j.Extensions = map[string]any{}
	}
	b, err := json.Marshal(struct {
		Spec        string   `json:"spec"`
		SpecVersion string   `json:"spec_version"`
		Data        dataJSON `json:"data"`
	}{"chara_card_v2", "2.0", j})
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
