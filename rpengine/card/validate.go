package card

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Validate checks the Character Card V2 rules the engine enforces (spec
// section 4.1) and returns nil or a *[ValidationError] listing every
// violation, each with its JSON Pointer. Unlike the engine, which stops at
// the first, it reports them all. The result is memoized with the hash, so
// validating the same bytes again is free.
func (c *Card) Validate() error {
	if c.valid {
		return nil
	}
	c.validOnce.Do(func() {
		if c.validErr = validate(c.raw); c.validErr == nil {
			memo.markValid(c.key)
		}
	})
	return c.validErr
}

func validate(raw []byte) error {
	root, err := decodeAny(raw)
	if err != nil {
		return err
	}
	v := validator{}
	v.card(root)
	if len(v.out) == 0 {
		return nil
	}
	return &ValidationError{Violations: v.out}
}

// decodeAny decodes a document Parse has checked, keeping numbers as text.
func decodeAny(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// The fields of data that must be strings, in the engine's order.
var requiredStrings = []string{"name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes", "system_prompt", "post_history_instructions", "creator", "character_version"}

type validator struct{ out []Violation }

func (v *validator) add(ptr, msg string) {
	v.out = append(v.out, Violation{Pointer: ptr, Message: msg})
}

func (v *validator) card(root any) {
	obj := root.(map[string]any) // Parse guarantees an object
	if s, ok := obj["spec"].(string); !ok || s != "chara_card_v2" {
		v.add("/spec", `must be "chara_card_v2"`)
	}
	if s, ok := obj["spec_version"].(string); !ok || s != "2.0" {
		v.add("/spec_version", `must be the string "2.0"`)
	}
	data, ok := obj["data"].(map[string]any)
	if !ok {
		v.add("/data", "must be an object")
		return
	}
	for _, f := range requiredStrings {
		v.str(data, "/data", f, true)
	}
	if s, ok := data["name"].(string); ok && strings.TrimSpace(s) == "" {
		v.add("/data/name", "must not be blank")
	}
	v.strings(data, "/data", "alternate_greetings", true)
	v.strings(data, "/data", "tags", true)
	v.object(data, "/data", "extensions")
	if b, ok := data["character_book"]; ok {
		v.book(b)
	}
}

func (v *validator) book(b any) {
	const at = "/data/character_book"
	book, ok := b.(map[string]any)
	if !ok {
		v.add(at, "must be an object")
		return
	}
	v.str(book, at, "name", false)
	v.str(book, at, "description", false)
	v.number(book, at, "scan_depth", false)
	v.number(book, at, "token_budget", false)
	v.boolean(book, at, "recursive_scanning", false)
	v.object(book, at, "extensions")
	entries, ok := book["entries"].([]any)
	if !ok {
		v.add(at+"/entries", "must be an array")
		return
	}
	for i, e := range entries {
		v.entry(e, at+"/entries/"+strconv.Itoa(i))
	}
}

func (v *validator) entry(e any, at string) {
	entry, ok := e.(map[string]any)
	if !ok {
		v.add(at, "must be an object")
		return
	}
	v.strings(entry, at, "keys", true)
	v.str(entry, at, "content", true)
	v.object(entry, at, "extensions")
	v.boolean(entry, at, "enabled", true)
	v.number(entry, at, "insertion_order", true)
	v.boolean(entry, at, "case_sensitive", false)
	v.str(entry, at, "name", false)
	v.number(entry, at, "priority", false)
	v.number(entry, at, "id", false)
	v.str(entry, at, "comment", false)
	v.boolean(entry, at, "selective", false)
	v.boolean(entry, at, "constant", false)
	v.strings(entry, at, "secondary_keys", false)
	if p, ok := entry["position"]; ok {
		if s, _ := p.(string); s != "before_char" && s != "after_char" {
			v.add(at+"/position", `must be "before_char" or "after_char"`)
		}
	}
}

// check reports field of obj when it is missing (and required) or fails ok.
func (v *validator) check(obj map[string]any, at, field string, required bool, what string, ok func(any) bool) {
	x, present := obj[field]
	switch {
	case !present && required:
		v.add(at+"/"+field, "is required and must be "+what)
	case present && !ok(x):
		v.add(at+"/"+field, "must be "+what+", not "+jsonType(x))
	}
}

func (v *validator) str(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a string", func(x any) bool { _, ok := x.(string); return ok })
}

func (v *validator) number(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a number", func(x any) bool { _, ok := x.(json.Number); return ok })
}

func (v *validator) boolean(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a boolean", func(x any) bool { _, ok := x.(bool); return ok })
}

func (v *validator) object(obj map[string]any, at, f string) {
	v.check(obj, at, f, true, "an object", func(x any) bool { _, ok := x.(map[string]any); return ok })
}

func (v *validator) strings(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "an array of strings", func(x any) bool { _, ok := x.([]any); return ok })
	arr, _ := obj[f].([]any)
	for i, x := range arr {
		if _, ok := x.(string); !ok {
			v.add(at+"/"+f+"/"+strconv.Itoa(i), "must be a string, not "+jsonType(x))
		}
	}
}

func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
