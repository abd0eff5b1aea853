package card

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/internal/errd"
)

// Data is a character as Go values: the data object of a Character Card
// V2. [New] makes a card of it and [Card.Data] reads one. A zero field is
// the empty value the format requires there (an empty string, list or
// object), so a card needs only its Name. Fields the format does not name
// need the card's JSON ([Card.Bytes]).
type Data struct {
	Name                    string   `json:"name"`                      // required: the character's name, {{char}} in the other fields
	Description             string   `json:"description"`               // who the character is
	Personality             string   `json:"personality"`               // a summary of the personality
	Scenario                string   `json:"scenario"`                  // the situation the conversation starts in
	FirstMessage            string   `json:"first_mes"`                 // the greeting ([Substitute] its macros to show it)
	MessageExamples         string   `json:"mes_example"`               // example dialogue
	CreatorNotes            string   `json:"creator_notes"`             // notes for people, not the model
	SystemPrompt            string   `json:"system_prompt"`             // replaces the engine's system prompt when set
	PostHistoryInstructions string   `json:"post_history_instructions"` // instructions after the conversation history
	AlternateGreetings      []string `json:"alternate_greetings"`       // other greetings
	Tags                    []string `json:"tags"`
	Creator                 string   `json:"creator"`
	CharacterVersion        string   `json:"character_version"`
	// Extensions holds extension data by name, as encoding/json
	// marshals it; nil is an empty object. Read from a card, each value
	// is its JSON text, a json.RawMessage.
	Extensions map[string]any `json:"extensions"`
	// CharacterBook is the lorebook (character_book), or nil.
	CharacterBook *Book `json:"character_book,omitempty"`
}

// Book is a lorebook: entries the engine adds to the prompt when their
// keys come up. A zero optional field is left out of a card.
type Book struct {
	Name              string         `json:"name,omitempty"`
	Description       string         `json:"description,omitempty"`
	ScanDepth         int            `json:"scan_depth,omitempty"`   // messages scanned for keys
	TokenBudget       int            `json:"token_budget,omitempty"` // tokens the entries may take
	RecursiveScanning bool           `json:"recursive_scanning,omitempty"`
	Extensions        map[string]any `json:"extensions"` // as Data.Extensions
	Entries           []Entry        `json:"entries"`
}

// Entry is one lorebook entry. A zero optional field is left out of a
// card.
type Entry struct {
	Keys           []string       `json:"keys"`    // any of them brings the entry in
	Content        string         `json:"content"` // what is added to the prompt
	Extensions     map[string]any `json:"extensions"`
	Enabled        bool           `json:"enabled"`
	InsertionOrder int            `json:"insertion_order"` // lower first
	CaseSensitive  bool           `json:"case_sensitive,omitempty"`
	Name           string         `json:"name,omitempty"`
	Priority       int            `json:"priority,omitempty"` // lower is dropped first past the budget
	ID             int            `json:"id,omitempty"`
	Comment        string         `json:"comment,omitempty"`
	Selective      bool           `json:"selective,omitempty"` // SecondaryKeys must come up too
	SecondaryKeys  []string       `json:"secondary_keys,omitempty"`
	Constant       bool           `json:"constant,omitempty"` // always added
	Position       string         `json:"position,omitempty"` // "before_char" or "after_char"
}

// New returns the Character Card V2 holding d. The card is valid: what
// [Card.Validate] would refuse (a blank Name, a lorebook entry's Position
// other than "before_char" or "after_char") is its *[ValidationError],
// and extension data encoding/json cannot marshal is an error too.
func New(d Data) (_ *Card, err error) {
	defer errd.Wrap(&err, "card: new")
	d.AlternateGreetings, d.Tags, d.Extensions = orEmpty(d.AlternateGreetings), orEmpty(d.Tags), objOrEmpty(d.Extensions)
	if b := d.CharacterBook; b != nil {
		nb := *b
		nb.Extensions, nb.Entries = objOrEmpty(b.Extensions), append([]Entry{}, b.Entries...)
		for i := range nb.Entries {
			e := &nb.Entries[i]
			e.Keys, e.Extensions = orEmpty(e.Keys), objOrEmpty(e.Extensions)
		}
		d.CharacterBook = &nb
	}
	b, err := json.Marshal(struct {
		Spec        string `json:"spec"`
		SpecVersion string `json:"spec_version"`
		Data        Data   `json:"data"`
	}{"chara_card_v2", "2.0", d})
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

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func objOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// Data returns the card's data object as Go values, for a game to show
// or use. Member names match exactly ("NAME" is another member), and a
// value of the wrong type (in a card that fails [Card.Validate]) is left
// zero. It decodes the card on each call.
func (c *Card) Data() Data {
	var d Data
	doc := c.raw
	items(doc, space(doc, 0), func(root item) int {
		if is(doc, root.ks, root.ke, "data") && doc[root.vs] == '{' {
			return d.decode(doc, root.vs)
		}
		return 0
	})
	return d
}

// decode reads the data object at doc[s] and returns its end.
func (d *Data) decode(doc []byte, s int) int {
	return items(doc, s, func(it item) int {
		i := it.vs
		switch text(doc, it.ks, it.ke) {
		case "name":
			d.Name = strAt(doc, i)
		case "description":
			d.Description = strAt(doc, i)
		case "personality":
			d.Personality = strAt(doc, i)
		case "scenario":
			d.Scenario = strAt(doc, i)
		case "first_mes":
			d.FirstMessage = strAt(doc, i)
		case "mes_example":
			d.MessageExamples = strAt(doc, i)
		case "creator_notes":
			d.CreatorNotes = strAt(doc, i)
		case "system_prompt":
			d.SystemPrompt = strAt(doc, i)
		case "post_history_instructions":
			d.PostHistoryInstructions = strAt(doc, i)
		case "alternate_greetings":
			d.AlternateGreetings = strsAt(doc, i)
		case "tags":
			d.Tags = strsAt(doc, i)
		case "creator":
			d.Creator = strAt(doc, i)
		case "character_version":
			d.CharacterVersion = strAt(doc, i)
		case "extensions":
			d.Extensions = objAt(doc, i)
		case "character_book":
			if doc[i] == '{' {
				d.CharacterBook = new(Book)
				return d.CharacterBook.decode(doc, i)
			}
		}
		return 0
	})
}

// decode reads the lorebook at doc[s] and returns its end.
func (b *Book) decode(doc []byte, s int) int {
	return items(doc, s, func(it item) int {
		i := it.vs
		switch text(doc, it.ks, it.ke) {
		case "name":
			b.Name = strAt(doc, i)
		case "description":
			b.Description = strAt(doc, i)
		case "scan_depth":
			b.ScanDepth = numAt(doc, i)
		case "token_budget":
			b.TokenBudget = numAt(doc, i)
		case "recursive_scanning":
			b.RecursiveScanning = boolAt(doc, i)
		case "extensions":
			b.Extensions = objAt(doc, i)
		case "entries":
			if doc[i] == '[' {
				return items(doc, i, func(el item) int {
					b.Entries = append(b.Entries, Entry{})
					if doc[el.vs] == '{' {
						return b.Entries[len(b.Entries)-1].decode(doc, el.vs)
					}
					return 0
				})
			}
		}
		return 0
	})
}

// decode reads the lorebook entry at doc[s] and returns its end.
func (e *Entry) decode(doc []byte, s int) int {
	return items(doc, s, func(it item) int {
		i := it.vs
		switch text(doc, it.ks, it.ke) {
		case "keys":
			e.Keys = strsAt(doc, i)
		case "content":
			e.Content = strAt(doc, i)
		case "extensions":
			e.Extensions = objAt(doc, i)
		case "enabled":
			e.Enabled = boolAt(doc, i)
		case "insertion_order":
			e.InsertionOrder = numAt(doc, i)
		case "case_sensitive":
			e.CaseSensitive = boolAt(doc, i)
		case "name":
			e.Name = strAt(doc, i)
		case "priority":
			e.Priority = numAt(doc, i)
		case "id":
			e.ID = numAt(doc, i)
		case "comment":
			e.Comment = strAt(doc, i)
		case "selective":
			e.Selective = boolAt(doc, i)
		case "secondary_keys":
			e.SecondaryKeys = strsAt(doc, i)
		case "constant":
			e.Constant = boolAt(doc, i)
		case "position":
			e.Position = strAt(doc, i)
		}
		return 0
	})
}

// The readers of the value at doc[i] when it is of the kind wanted, else
// of its zero.

func strAt(doc []byte, i int) string {
	if doc[i] != '"' {
		return ""
	}
	return text(doc, i, skipString(doc, i))
}

func strsAt(doc []byte, i int) []string {
	if doc[i] != '[' {
		return nil
	}
	out := []string{}
	items(doc, i, func(it item) int {
		if doc[it.vs] == '"' {
			out = append(out, strAt(doc, it.vs))
		}
		return 0
	})
	return out
}

func numAt(doc []byte, i int) int {
	f, _ := strconv.ParseFloat(string(doc[i:skipValue(doc, i)]), 64)
	return int(f)
}

func boolAt(doc []byte, i int) bool { return doc[i] == 't' }

func objAt(doc []byte, i int) map[string]any {
	if doc[i] != '{' {
		return nil
	}
	out := map[string]any{}
	items(doc, i, func(it item) int {
		e := skipValue(doc, it.vs)
		out[text(doc, it.ks, it.ke)] = json.RawMessage(doc[it.vs:e:e])
		return e
	})
	return out
}

// Substitute replaces in text the macros card authors write for, as
// SillyTavern does in a greeting before it shows it (docs/card.md):
// {{char}} and <BOT> become char, {{user}} and <USER> become user, each in
// any case. It makes one pass, so a name holding a macro is kept as it
// is.
func Substitute(text, char, user string) string {
	macros := [...]struct{ macro, with string }{{"{{char}}", char}, {"<bot>", char}, {"{{user}}", user}, {"<user>", user}}
	var b strings.Builder
	for {
		i := strings.IndexAny(text, "{<")
		if i < 0 {
			return b.String() + text
		}
		b.WriteString(text[:i])
		n := 1
		for _, m := range macros {
			if len(text)-i >= len(m.macro) && strings.EqualFold(text[i:i+len(m.macro)], m.macro) {
				b.WriteString(m.with)
				n = len(m.macro)
				break
			}
		}
		if n == 1 {
			b.WriteByte(text[i])
		}
		text = text[i+n:]
	}
}
