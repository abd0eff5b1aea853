package card

import (
	"slices"
	"strconv"
	"strings"
)

// Validate checks the Character Card V2 rules the engine enforces
// (docs/rpengine-protocol.md, "Cards and hashes") and returns nil or a *[ValidationError] listing every
// violation, each with its JSON Pointer. Unlike the engine, which stops at
// the first, it reports them all. The rules are checked by Parse, on the
// canonical form it hashes, so Validate costs nothing.
func (c *Card) Validate() error {
	if len(c.violations) == 0 {
		return nil
	}
	return &ValidationError{Violations: c.violations}
}

// The fields of data that must be strings, in the engine's order.
var requiredStrings = []string{"name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes", "system_prompt", "post_history_instructions", "creator", "character_version"}

// rule is the rule for one member of an object: its kind ('"', '{', '[',
// 't' boolean, '0' number), or 'S' an array of strings, or 'B' a string
// that is not blank, or one of the values in text; must replaces the
// message when it is broken. The rules of inner apply to the value, and
// those of each to each element of the value.
type rule struct {
	field       string
	want        byte
	required    bool
	must        string
	text        []string
	inner, each *rules
}

// rules are the rules of an object, in the engine's order, and the
// indexes of the rules of each field.
type rules struct {
	list    []rule
	byField map[string][]int
}

func newRules(list ...rule) *rules {
	rs := &rules{list: list, byField: map[string][]int{}}
	for i, r := range list {
		rs.byField[r.field] = append(rs.byField[r.field], i)
	}
	return rs
}

var (
	rootRules = newRules(rule{field: "spec", required: true, must: `must be "chara_card_v2"`, text: []string{`"chara_card_v2"`}},
		rule{field: "spec_version", required: true, must: `must be the string "2.0"`, text: []string{`"2.0"`}},
		rule{field: "data", want: '{', required: true, must: "must be an object", inner: dataRules})
	dataRules = newRules(slices.Concat(kinds('"', true, requiredStrings...), []rule{{field: "name", want: 'B'},
		{field: "alternate_greetings", want: 'S', required: true}, {field: "tags", want: 'S', required: true},
		{field: "extensions", want: '{', required: true}, {field: "character_book", want: '{', inner: bookRules}})...)
	bookRules = newRules(slices.Concat(kinds('"', false, "name", "description"), kinds('0', false, "scan_depth", "token_budget"),
		[]rule{{field: "recursive_scanning", want: 't'}, {field: "extensions", want: '{', required: true},
			{field: "entries", want: '[', required: true, must: "must be an array", each: entryRules}})...)
	entryRules = newRules(slices.Concat([]rule{{field: "keys", want: 'S', required: true}, {field: "content", want: '"', required: true},
		{field: "extensions", want: '{', required: true}, {field: "enabled", want: 't', required: true},
		{field: "insertion_order", want: '0', required: true}, {field: "case_sensitive", want: 't'}, {field: "name", want: '"'},
		{field: "priority", want: '0'}, {field: "id", want: '0'}, {field: "comment", want: '"'}, {field: "selective", want: 't'},
		{field: "constant", want: 't'}, {field: "secondary_keys", want: 'S'},
		{field: "position", must: `must be "before_char" or "after_char"`, text: []string{`"before_char"`, `"after_char"`}}})...)
)

// kindOf is kind as a table.
var kindOf = func() (t [256]byte) {
	for b := range t {
		t[b] = kind([]byte{byte(b)}, 0)
	}
	return t
}()

func kinds(want byte, required bool, fields ...string) []rule {
	var out []rule
	for _, f := range fields {
		out = append(out, rule{field: f, want: want, required: required})
	}
	return out
}

var kindNames = map[byte]string{'"': "a string", '{': "an object", '[': "an array", 't': "a boolean", 'n': "null", '0': "a number", 'S': "an array of strings"}

// validate checks the rules on a canonical card and returns the
// violations: those of each object in its rules' order, those of the
// objects inside it after them.
func validate(doc []byte) []Violation {
	v := validator{doc: doc}
	v.object(0, "", rootRules)
	return v.out
}

type validator struct {
	doc []byte
	out []Violation
}

func (v *validator) add(ptr, msg string) {
	v.out = append(v.out, Violation{Pointer: ptr, Message: msg})
}

// object checks the object at s against rs, and the objects inside it
// that rules look into as it meets them, and returns its end.
func (v *validator) object(s int, at string, rs *rules) int {
	doc := v.doc
	var buf [16]int
	vals := buf[:len(rs.list)] // where each rule's value starts; 0: absent
	mark := len(v.out)
	i := s + 1 // canonical: no white space
	for doc[i] != '}' {
		ke := skipString(doc, i)
		vs, end := ke+1, 0
		for _, k := range rs.byField[string(doc[i+1:ke-1])] { // an escaped name is no field
			r := &rs.list[k]
			vals[k] = vs
			if r.inner != nil && doc[vs] == '{' {
				end = v.object(vs, at+"/"+r.field, r.inner)
			} else if r.each != nil && doc[vs] == '[' {
				end = v.each(vs, at+"/"+r.field, r.each)
			}
		}
		if end == 0 {
			end = skipValue(doc, vs)
		}
		if i = end; doc[i] == ',' {
			i++
		}
	}
	end := i + 1
	nested := len(v.out)
	for i := range rs.list {
		if x, r := vals[i], &rs.list[i]; x == 0 || r.want != kindOf[doc[x]] || r.text != nil { // else the common case: of the kind wanted
			v.check(at, r, x)
		}
	}
	if nested > mark && len(v.out) > nested { // the object's own first
		v.out = append(v.out[:mark], slices.Concat(v.out[nested:], v.out[mark:nested])...)
	}
	return end
}

// each checks the elements of the array at s, which must be objects,
// against rs, and returns its end.
func (v *validator) each(s int, at string, rs *rules) int {
	doc := v.doc
	i := s + 1
	for n := 0; doc[i] != ']'; n++ {
		// An element's pointer is made only for its violations.
		mark := len(v.out)
		if doc[i] == '{' {
			i = v.object(i, "", rs)
		} else {
			v.add("", "must be an object, not "+kindNames[kind(doc, i)])
			i = skipValue(doc, i)
		}
		for k := mark; k < len(v.out); k++ {
			v.out[k].Pointer = at + "/" + strconv.Itoa(n) + v.out[k].Pointer
		}
		if doc[i] == ',' {
			i++
		}
	}
	return i + 1
}

// check reports the value at i (0: absent) of the object at at when it
// breaks r.
func (v *validator) check(at string, r *rule, i int) {
	doc := v.doc
	want := r.want
	if want == 'S' {
		want = '['
	}
	msg := ""
	switch {
	case i == 0 && !r.required:
	case r.text != nil:
		if i == 0 || !slices.Contains(r.text, string(doc[i:skipValue(doc, i)])) {
			msg = r.must
		}
	case r.want == 'B':
		if doc[i] == '"' && strings.TrimSpace(text(doc, i, skipString(doc, i))) == "" {
			msg = "must not be blank"
		}
	case i == 0 && r.must != "":
		msg = r.must
	case i == 0:
		msg = "is required and must be " + kindNames[r.want]
	case kind(doc, i) != want && r.must != "":
		msg = r.must
	case kind(doc, i) != want:
		msg = "must be " + kindNames[r.want] + ", not " + kindNames[kind(doc, i)]
	case r.want == 'S':
		for n, j := 0, space(doc, i+1); doc[j] != ']'; n++ {
			if k := kind(doc, j); k != '"' {
				v.add(at+"/"+r.field+"/"+strconv.Itoa(n), "must be a string, not "+kindNames[k])
			}
			if j = space(doc, skipValue(doc, j)); doc[j] == ',' {
				j = space(doc, j+1)
			}
		}
	}
	if msg != "" {
		v.add(at+"/"+r.field, msg)
	}
}
