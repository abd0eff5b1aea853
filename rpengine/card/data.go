package card

import (
	"encoding/json"
	"reflect"
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

// orEmpty and objOrEmpty return their argument, or an empty one for nil:
// the format wants [] and {} there.
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
		if text(doc, root.ks, root.ke) == "data" && doc[root.vs] == '{' {
			return decodeInto(reflect.ValueOf(&d).Elem(), doc, root.vs)
		}
		return 0
	})
	return d
}

// decodeInto reads the object at doc[s] into the struct v (Data, Book or
// Entry), by the names of its fields' json tags, and returns its end.
func decodeInto(v reflect.Value, doc []byte, s int) int {
	return items(doc, s, func(it item) int {
		name := text(doc, it.ks, it.ke)
		for i := range v.NumField() {
			if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); tag == name {
				return decodeValue(v.Field(i), doc, it.vs)
			}
		}
		return 0
	})
}

// decodeValue reads the value at doc[i] into f when it is of f's kind,
// and returns its end, or 0.
func decodeValue(f reflect.Value, doc []byte, i int) int {
	switch k := kind(doc, i); f.Interface().(type) {
	case string:
		if k == '"' {
			f.SetString(text(doc, i, skipString(doc, i)))
		}
	case int:
		n, _ := strconv.ParseFloat(string(doc[i:skipValue(doc, i)]), 64)
		f.SetInt(int64(n))
	case bool:
		f.SetBool(doc[i] == 't')
	case []string:
		if k == '[' {
			out := []string{}
			end := items(doc, i, func(it item) int {
				if doc[it.vs] == '"' {
					out = append(out, text(doc, it.vs, skipString(doc, it.vs)))
				}
				return 0
			})
			f.Set(reflect.ValueOf(out))
			return end
		}
	case map[string]any: // extensions: each value its JSON text
		if k == '{' {
			out := map[string]any{}
			end := items(doc, i, func(it item) int {
				e := skipValue(doc, it.vs)
				out[text(doc, it.ks, it.ke)] = json.RawMessage(doc[it.vs:e:e])
				return e
			})
			f.Set(reflect.ValueOf(out))
			return end
		}
	case *Book:
		if k == '{' {
			f.Set(reflect.ValueOf(new(Book)))
			return decodeInto(f.Elem(), doc, i)
		}
	case []Entry:
		if k == '[' {
			var es []Entry
			end := items(doc, i, func(it item) int {
				es = append(es, Entry{})
				if doc[it.vs] == '{' {
					return decodeInto(reflect.ValueOf(&es[len(es)-1]).Elem(), doc, it.vs)
				}
				return 0
			})
			f.Set(reflect.ValueOf(es))
			return end
		}
	}
	return 0
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
