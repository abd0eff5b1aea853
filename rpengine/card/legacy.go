package card

import (
	"strings"
)

// This file reads the formats that came before Character Card V2 the way
// SillyTavern imports them, so that a card a player downloads means the
// same here as there:
//
//   - V1 ("spec" absent, "name" present): the six V1 fields, plus the
//     creator notes from "creatorcomment" (or "creator_notes"), "creator",
//     and "tags", which old exports also write as one comma-separated
//     string.
//   - Pygmalion/gradio ("spec" and "name" absent, "char_name" present):
//     char_name, char_persona, char_greeting, world_scenario and
//     example_dialogue are the name, description, first message, scenario
//     and example dialogue; it has no personality.
//
// Every other V2 field starts empty, as SillyTavern's import leaves it
// (it also writes keys of its own into extensions: talkativeness, fav,
// world, depth_prompt; here extensions starts as {}). The original
// top-level fields stay where they are (a V1 backfill), so nothing in the
// document is lost. SillyTavern also strips the characters a file name
// cannot hold from the name, because it names the card's file after it;
// the name is kept here as the card gives it.

// creatorNotesPlaceholder is the text an old card editor leaves in
// creator_notes; SillyTavern's import removes it.
const creatorNotesPlaceholder = "Creator's notes go here."

// legacyField maps a field of an old format to its place in data.
type legacyField struct{ from, to string }

var (
	v1Mapping = []legacyField{
		{"name", "name"}, {"description", "description"}, {"personality", "personality"},
		{"scenario", "scenario"}, {"first_mes", "first_mes"}, {"mes_example", "mes_example"},
	}
	gradioMapping = []legacyField{
		{"char_name", "name"}, {"char_persona", "description"}, {"char_greeting", "first_mes"},
		{"world_scenario", "scenario"}, {"example_dialogue", "mes_example"},
	}
)

// upgradeLegacy builds the V2 data object of a card that has neither spec
// nor data, and notes what it did.
func (r *repairer) upgradeLegacy(root *node) *node {
	mapping, msg := v1Mapping, "upgraded a V1 card to V2 as SillyTavern imports it: "+
		"the V1 fields were copied into data and kept at the top level; the other V2 fields start empty"
	if root.get("name") == nil && root.get("char_name") != nil {
		mapping, msg = gradioMapping, "read a Pygmalion/gradio card as V2 as SillyTavern imports it: "+
			"char_name, char_persona, char_greeting, world_scenario and example_dialogue became "+
			"name, description, first_mes, scenario and mes_example (the originals are kept at the top level); "+
			"the other V2 fields start empty"
	}
	r.note("", msg)
	got := &node{kind: '{'} // the fields found, in any order
	for _, m := range mapping {
		if v := root.get(m.from); v != nil && v.kind != nodeNull {
			got.set(m.to, v)
		}
	}
	r.legacyCreatorNotes(root, got)
	if v := root.get("creator"); v != nil && v.kind != nodeNull {
		got.set("creator", v)
	}
	r.legacyTags(root, got)
	data := &node{kind: '{'} // in the V2 spec's order
	for _, f := range v2Order {
		switch v := got.get(f); {
		case v != nil:
			data.set(f, v)
		case f == "alternate_greetings" || f == "tags":
			data.set(f, &node{kind: '['})
		case f == "extensions":
			data.set(f, &node{kind: '{'})
		default:
			data.set(f, strNode(""))
		}
	}
	return data
}

// v2Order lists the required data fields in the order of the V2 spec.
var v2Order = []string{"name", "description", "personality", "scenario", "first_mes", "mes_example",
	"creator_notes", "system_prompt", "post_history_instructions", "alternate_greetings", "tags",
	"creator", "character_version", "extensions"}

// legacyCreatorNotes takes creator_notes from creatorcomment, else from
// creator_notes without the editor's placeholder.
func (r *repairer) legacyCreatorNotes(root, data *node) {
	if v := root.get("creatorcomment"); v != nil && v.kind != nodeNull {
		data.set("creator_notes", v)
		r.note("/data/creator_notes", "copied from the top-level creatorcomment")
		return
	}
	v := root.get("creator_notes")
	if v == nil || v.kind == nodeNull {
		return
	}
	if v.kind == '"' && strings.Contains(v.text, creatorNotesPlaceholder) {
		v = strNode(strings.Replace(v.text, creatorNotesPlaceholder, "", 1))
		r.note("/data/creator_notes", "copied from the top-level creator_notes without the editor placeholder \""+creatorNotesPlaceholder+"\"")
	}
	data.set("creator_notes", v)
}

// legacyTags copies tags, splitting a comma-separated string.
func (r *repairer) legacyTags(root, data *node) {
	v := root.get("tags")
	switch {
	case v == nil || v.kind == nodeNull:
		return
	case v.kind != '"':
		data.set("tags", v)
		return
	}
	tags := &node{kind: '['}
	for _, t := range strings.Split(v.text, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags.items = append(tags.items, strNode(t))
		}
	}
	data.set("tags", tags)
	r.note("/data/tags", "split the top-level string of comma-separated tags into an array")
}
