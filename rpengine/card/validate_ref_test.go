package card

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Test_validateCanonical_reference compares the validator with the
// reference on random damage to every test card.
func Test_validateCanonical_reference(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	values := []string{`null`, `1`, `1.5`, `"x"`, `" "`, `""`, `true`, `[]`, `["a"]`, `[1]`, `{}`, `{"a":1}`, `"before_char"`, `"after_char"`, `"chara_card_v2"`, `"2.0"`}
	for _, name := range []string{"full.json", "minimal.json", "cjk-emoji.json", "broken-entry-fields.json", "invalid-content.json", "v1.json", "broken-v3.json"} {
		base := readCard(t, name)
		for i := 0; i < scaled(150); i++ {
			doc := base
			for n := r.IntN(4); n >= 0; n-- {
				doc = damage(t, r, doc, values)
			}
			canon, err := AppendCanonical(nil, doc)
			if err != nil {
				t.Fatal(err)
			}
			got := validate(canon)
			var want []Violation
			if err := refValidate(doc); err != nil {
				want = err.(*ValidationError).Violations
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\ngot  %v\nwant %v", doc, got, want)
			}
		}
	}
}

// damage replaces or removes one value somewhere in doc.
func damage(t *testing.T, r *rand.Rand, doc []byte, values []string) []byte {
	var paths []string
	var walk func(p string, v any)
	walk = func(p string, v any) {
		paths = append(paths, p)
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(p+"/"+escapeToken(k), e)
			}
		case []any:
			for i, e := range v {
				walk(p+"/"+strconv.Itoa(i), e)
			}
		}
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	walk("", v)
	p := paths[r.IntN(len(paths))]
	if p == "" {
		return doc
	}
	op := `{"op":"replace","path":` + strconv.Quote(p) + `,"value":` + values[r.IntN(len(values))] + `}`
	if r.IntN(3) == 0 {
		op = `{"op":"remove","path":` + strconv.Quote(p) + `}`
	}
	out, err := ApplyPatch(doc, []byte("["+op+"]"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refValidate is the first implementation of the rules, on values decoded
// by encoding/json; it is kept as an oracle for the byte-walking refValidator.
func refValidate(raw []byte) error {
	root, err := decodeAny(raw)
	if err != nil {
		return err
	}
	v := refValidator{}
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

type refValidator struct{ out []Violation }

func (v *refValidator) add(ptr, msg string) {
	v.out = append(v.out, Violation{Pointer: ptr, Message: msg})
}

func (v *refValidator) card(root any) {
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

func (v *refValidator) book(b any) {
	const at = "/data/character_book"
	book, ok := b.(map[string]any)
	if !ok {
		v.add(at, "must be an object, not "+refJSONType(b))
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

func (v *refValidator) entry(e any, at string) {
	entry, ok := e.(map[string]any)
	if !ok {
		v.add(at, "must be an object, not "+refJSONType(e))
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
func (v *refValidator) check(obj map[string]any, at, field string, required bool, what string, ok func(any) bool) {
	x, present := obj[field]
	switch {
	case !present && required:
		v.add(at+"/"+field, "is required and must be "+what)
	case present && !ok(x):
		v.add(at+"/"+field, "must be "+what+", not "+refJSONType(x))
	}
}

func (v *refValidator) str(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a string", func(x any) bool { _, ok := x.(string); return ok })
}

func (v *refValidator) number(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a number", func(x any) bool { _, ok := x.(json.Number); return ok })
}

func (v *refValidator) boolean(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "a boolean", func(x any) bool { _, ok := x.(bool); return ok })
}

func (v *refValidator) object(obj map[string]any, at, f string) {
	v.check(obj, at, f, true, "an object", func(x any) bool { _, ok := x.(map[string]any); return ok })
}

func (v *refValidator) strings(obj map[string]any, at, f string, req bool) {
	v.check(obj, at, f, req, "an array of strings", func(x any) bool { _, ok := x.([]any); return ok })
	arr, _ := obj[f].([]any)
	for i, x := range arr {
		if _, ok := x.(string); !ok {
			v.add(at+"/"+f+"/"+strconv.Itoa(i), "must be a string, not "+refJSONType(x))
		}
	}
}

func refJSONType(x any) string {
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
