package card

import (
	"bytes"
	"strconv"
)

// Change is one edit made by [Repair]: where (RFC 6901 JSON Pointer) and
// what.
type Change struct{ Pointer, Message string }

// String formats a change as "pointer: message", the pointer "" of the
// root as "(root)" (issue #32: a V1 upgrade read ": upgraded ...").
func (c Change) String() string { return rootOr(c.Pointer) + ": " + c.Message }

// Repair turns what real tools export into a card the engine accepts and
// reports each change it made. It removes a UTF-8 byte order mark,
// upgrades a V1 or Pygmalion/gradio card to V2 the way SillyTavern imports
// it (the old top-level fields are kept where they are as a backfill;
// creatorcomment becomes creator_notes, a comma-separated tags string
// becomes an array), reads a
// V3 card ("spec": "chara_card_v3") down to V2 keeping every V3-only field,
// fills missing (or null) required fields with empty values, and adds the
// lorebook's and its entries' missing extensions. It never changes content
// otherwise: a value of the wrong type or a blank name is left alone, and
// the returned error is then the remaining *[ValidationError] (with the
// repaired card, so the caller can show both). Member order is kept; the
// output is compact JSON. A document over [MaxSize] is refused before it
// is read, with an error matching [ErrTooLarge].
func Repair(data []byte) (*Card, []Change, error) {
	if err := checkSize(data, "document"); err != nil {
		return nil, nil, err
	}
	var bom []Change
	if bytes.HasPrefix(data, utf8BOM) {
		data = data[len(utf8BOM):]
		bom = []Change{{Pointer: "", Message: "removed the UTF-8 byte order mark before the document"}}
	}
	c, changes, err := repair(data)
	return c, append(bom, changes...), err
}

func repair(data []byte) (*Card, []Change, error) {
	if _, err := Parse(data); err != nil {
		return nil, nil, err
	}
	root := decodeTree(data)
	r := repairer{}
	r.card(root)
	if len(r.changes) == 0 {
		c, _ := Parse(data)
		return c, nil, c.Validate()
	}
	c, err := Parse(root.append(nil))
	if err != nil {
		return nil, r.changes, err
	}
	return c, r.changes, c.Validate()
}

type repairer struct{ changes []Change }

func (r *repairer) note(ptr, msg string) {
	r.changes = append(r.changes, Change{Pointer: ptr, Message: msg})
}

func (r *repairer) card(root *node) {
	spec := root.get("spec")
	switch {
	case spec == nil:
		r.upgradeV1(root)
	case spec.kind == '"' && spec.text == "chara_card_v3":
		root.set("spec", strNode("chara_card_v2"))
		r.note("/spec", `read a V3 card as V2: "chara_card_v3" -> "chara_card_v2" (V3-only fields kept)`)
		if v := root.get("spec_version"); v == nil || v.kind != '"' || v.text != "2.0" {
			root.set("spec_version", strNode("2.0"))
			r.note("/spec_version", `set to "2.0"`)
		}
	}
	if v := root.get("spec_version"); v == nil || v.kind == nodeNull {
		root.set("spec_version", strNode("2.0"))
		r.note("/spec_version", `added "2.0"`)
	}
	data := root.get("data")
	if data == nil || data.kind != '{' {
		return
	}
	for _, f := range requiredStrings {
		r.fill(data, "/data", f, strNode(""), `""`)
	}
	r.fill(data, "/data", "alternate_greetings", &node{kind: '['}, "[]")
	r.fill(data, "/data", "tags", &node{kind: '['}, "[]")
	r.fill(data, "/data", "extensions", &node{kind: '{'}, "{}")
	if book := data.get("character_book"); book != nil && book.kind == '{' {
		r.book(book)
	}
}

// upgradeV1 wraps a card without spec into V2: a V1 or Pygmalion card's
// fields become a data object (legacy.go); a card that has data only gets
// its spec.
func (r *repairer) upgradeV1(root *node) {
	data := root.get("data")
	if data != nil && data.kind != '{' {
		return // not a V1 card either; leave it for Validate to report
	}
	if data == nil {
		data = r.upgradeLegacy(root) // legacy.go
	} else {
		r.note("", `added spec "chara_card_v2" (the card has data but no spec)`)
	}
	spec := &node{kind: '{', keys: []string{"spec", "spec_version", "data"}, items: []*node{strNode("chara_card_v2"), strNode("2.0"), data}}
	for i, k := range root.keys {
		if k != "data" {
			spec.set(k, root.items[i])
		}
	}
	*root = *spec
}

func (r *repairer) fill(obj *node, at, field string, empty *node, what string) {
	if v := obj.get(field); v == nil || v.kind == nodeNull {
		verb := "added missing "
		if v != nil {
			verb = "replaced null "
		}
		obj.set(field, empty)
		r.note(at+"/"+field, verb+"required field with "+what)
	}
}

func (r *repairer) book(book *node) {
	const at = "/data/character_book"
	r.fill(book, at, "extensions", &node{kind: '{'}, "{}")
	r.fill(book, at, "entries", &node{kind: '['}, "[]")
	entries := book.get("entries")
	if entries.kind != '[' {
		return
	}
	for i, e := range entries.items {
		if e.kind != '{' {
			continue
		}
		ep := at + "/entries/" + strconv.Itoa(i)
		r.fill(e, ep, "keys", &node{kind: '['}, "[]")
		r.fill(e, ep, "content", strNode(""), `""`)
		r.fill(e, ep, "extensions", &node{kind: '{'}, "{}")
		r.fill(e, ep, "enabled", &node{kind: 't', text: "true"}, "true (entries are enabled unless they say otherwise)")
		r.fill(e, ep, "insertion_order", &node{kind: '0', text: "0"}, "0")
	}
}
