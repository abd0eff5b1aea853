package card

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #32: a card's content can be read as Go values, every field the
// engine's rules name, with the lorebook and its entries.
func TestCard_Data(t *testing.T) {
	t.Parallel()
	d := mustParse(t, string(readCard(t, "full.json"))).Data()
	testutil.Equal(t, "name", d.Name, "Captain Mira Vance")
	testutil.Equal(t, "scenario", d.Scenario, "{{user}} has just signed on as the Kestrel's new engineer.")
	testutil.Equal(t, "greetings", d.AlternateGreetings, []string{`*The airlock hisses.* "Shoes off the deck plating, rookie."`, `"We're burning in five. Strap in."`})
	testutil.Equal(t, "tags", d.Tags, []string{"sci-fi", "captain", "salvage"})
	testutil.Equal(t, "version", d.CharacterVersion, "1.2.0")
	testutil.Equal(t, "an extension as its JSON", string(d.Extensions["depth_prompt"].(json.RawMessage)), `{
        "prompt": "Mira hates being called ma'am.",
        "depth": 4,
        "role": "system"
      }`)
	if d.CharacterBook == nil || d.CharacterBook.Name != "Kestrel lore" || len(d.CharacterBook.Entries) == 0 {
		t.Fatalf("book %+v", d.CharacterBook)
	}
	// Every field against encoding/json's reading of the same card (its
	// case-insensitive names do not matter in this card), compared as
	// JSON: an extension is its JSON text here, a decoded value there.
	var want struct{ Data Data }
	testutil.Success(t, json.Unmarshal(readCard(t, "full.json"), &want))
	testutil.Equal(t, "every field", asJSON(t, d), asJSON(t, want.Data))

	// Names match exactly; values of the wrong type are left zero.
	d = mustParse(t, `{"data":{"NAME":"No","tags":["a",1],"nam\u0065":"Yes","character_book":[]}}`).Data()
	testutil.Equal(t, "escaped name read", d.Name, "Yes")
	testutil.Equal(t, "strings only", d.Tags, []string{"a"})
	testutil.Equal(t, "book not an object", d.CharacterBook, (*Book)(nil))
}

// New and Data are inverses for the fields they share.
func TestNew_Data(t *testing.T) {
	t.Parallel()
	in := Data{Name: "Bram", FirstMessage: "Need a blade, {{user}}?", Tags: []string{"smith"}, AlternateGreetings: []string{},
		Extensions: map[string]any{"game": json.RawMessage(`{"level":3}`)},
		CharacterBook: &Book{Name: "Forge", ScanDepth: 4, Extensions: map[string]any{}, Entries: []Entry{
			{Keys: []string{"steel"}, Content: "Bram's steel is folded.", Extensions: map[string]any{}, Enabled: true, InsertionOrder: 1, Position: "before_char"},
			{Keys: []string{}, Content: "A plain entry.", Extensions: map[string]any{}, SecondaryKeys: []string{"x"}, Selective: true, Priority: 2, ID: 9},
		}}}
	c, err := New(in)
	testutil.Success(t, err)
	testutil.Equal(t, "round trip", asJSON(t, c.Data()), asJSON(t, in))
	// Zero values are the empty values the format requires.
	c, err = New(Data{Name: "Ari", CharacterBook: &Book{Entries: []Entry{{Content: "c", Enabled: true}}}})
	testutil.Success(t, err)
	if !bytes.Contains(c.Bytes(), []byte(`"character_book":{"extensions":{},"entries":[{"keys":[],"content":"c","extensions":{},"enabled":true,"insertion_order":0}]}`)) {
		t.Errorf("%s", c.Bytes())
	}
	_, err = New(Data{Name: "Ari", CharacterBook: &Book{Entries: []Entry{{Position: "middle"}}}})
	var ve *ValidationError
	testutil.ErrorAs(t, err, &ve)
}

// Issue #32: the macros of a greeting, as SillyTavern replaces them.
func TestSubstitute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"Hello, {{user}}. I am {{char}}.", "Hello, Player. I am Ari."},
		{"{{USER}} {{Char}} {{uSeR}}", "Player Ari Player"},
		{"<USER> meets <BOT>; <user> and <bot>", "Player meets Ari; Player and Ari"},
		{"{{char}}{{char}}", "AriAri"},
		{"{{cha {char}} <BOT {{user} <u>", "{{cha {char}} <BOT {{user} <u>"},
		{"{{original}} and {{random}} stay", "{{original}} and {{random}} stay"},
		{"", ""},
		{"ends with {", "ends with {"},
	} {
		testutil.Equal(t, tt.in, Substitute(tt.in, "Ari", "Player"), tt.want)
	}
	testutil.Equal(t, "names holding macros are kept", Substitute("{{user}}", "Ari", "{{char}}"), "{{char}}")
}

// Issue #32: Load keeps a PNG card's image, decodable, without the card.
func TestCard_Portrait(t *testing.T) {
	t.Parallel()
	card := readCard(t, "minimal.json")
	var img bytes.Buffer
	testutil.Success(t, png.Encode(&img, image.NewGray(image.Rect(0, 0, 3, 2))))
	file := makePNG(t, [][]byte{textChunk("chara", card)}, [][]byte{textChunk("ccv3", asCCV3(t, card)), chunk("tEXt", []byte("Comment\x00kept"))})
	c, _, err := Load(file)
	testutil.Success(t, err)
	p := c.Portrait()
	m, err := png.Decode(bytes.NewReader(p))
	testutil.Success(t, err)
	testutil.Equal(t, "size", m.Bounds().Dx(), 1)
	if bytes.Contains(p, []byte("chara\x00")) || bytes.Contains(p, []byte("ccv3\x00")) || !bytes.Contains(p, []byte("Comment\x00kept")) {
		t.Errorf("portrait keeps the card or drops other chunks: %q", p)
	}
	testutil.Equal(t, "JSON card", mustParse(t, string(card)).Portrait(), []byte(nil))
}

// Issue #32: a digest prints as its 64 hex digits, under %x too.
func TestDigest_Format(t *testing.T) {
	t.Parallel()
	d := mustParse(t, `{"data":{"age":4,"name":"Ari","tags":["a"]},"spec":"chara_card_v2"}`).Hash()
	const hex = "71981de431e9b5327456a39a3eed23fb6eabb68efdd050f271c222f6f50a8b31"
	for _, f := range []string{"%x", "%s", "%v"} {
		testutil.Equal(t, f, fmt.Sprintf(f, d), hex)
	}
	testutil.Equal(t, "%X", fmt.Sprintf("%X", d), "71981DE431E9B5327456A39A3EED23FB6EABB68EFDD050F271C222F6F50A8B31")
	testutil.Equal(t, "%q", fmt.Sprintf("%q", d), `"`+hex+`"`)
	testutil.Equal(t, "Sprint", fmt.Sprint(d), hex)
}

// Issue #32: a change or violation at the root names it.
func TestChange_String(t *testing.T) {
	t.Parallel()
	testutil.Equal(t, "root", Change{Pointer: "", Message: "upgraded"}.String(), "(root): upgraded")
	testutil.Equal(t, "member", Change{Pointer: "/data/tags", Message: "split"}.String(), "/data/tags: split")
	testutil.Equal(t, "violation", Violation{Pointer: "", Message: "must be an object"}.String(), "(root): must be an object")
}

// asJSON returns v as canonical JSON.
func asJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	testutil.Success(t, err)
	return string(canonicalOf(t, string(b)))
}
