package card

import (
	"strconv"
	"strings"
)

// Validate checks the Character Card V2 rules the engine enforces (spec
// section 4.1) and returns nil or a *[ValidationError] listing every
// violation, each with its JSON Pointer. Unlike the engine, which stops at
// the first, it reports them all. The rules are checked by Parse, on the
// canonical form it hashes, so Validate costs nothing.
func (c *Card) Validate() error {
	if c.valid {
		return nil
	}
	c.validOnce.Do(func() {
		// Parse found the card in the memo as invalid: check it again to
		// list the violations.
		canon, err := AppendCanonical(nil, c.raw)
		if err != nil {
			c.violations = []Violation{{Message: err.Error()}}
			return
		}
		c.violations = validateCanonical(canon)
	})
	return &ValidationError{Violations: c.violations}
}

// The fields of data that must be strings, in the engine's order.
var requiredStrings = []string{"name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes", "system_prompt", "post_history_instructions", "creator", "character_version"}

// validateCanonical checks the rules on a canonical document whose root is
// an object. It walks the bytes once: containers the rules look into
// (data, the book, its entries) are walked where they are met, everything
// else is skipped, and the violations are put in rule order afterwards.
func validateCanonical(doc []byte) []Violation {
	v := validator{doc: doc}
	var data []Violation
	var dataEnd int
	kids := v.walk(0, func(key []byte, vs int) int {
		if string(key) == "data" && doc[vs] == '{' {
			dataEnd, data = v.data(vs)
			return dataEnd
		}
		return -1
	}, nil)
	if s, ok := v.field(kids, "spec"); !ok || string(doc[s.s:s.e]) != `"chara_card_v2"` {
		v.add("/spec", `must be "chara_card_v2"`)
	}
	if s, ok := v.field(kids, "spec_version"); !ok || string(doc[s.s:s.e]) != `"2.0"` {
		v.add("/spec_version", `must be the string "2.0"`)
	}
	if dataEnd == 0 {
		v.add("/data", "must be an object")
	}
	return append(v.out, data...)
}

type validator struct {
	doc []byte
	out []Violation
}

func (v *validator) add(ptr, msg string) {
	v.out = append(v.out, Violation{Pointer: ptr, Message: msg})
}

// walk lists the members of the object at s. descend is offered each
// member's key and value start; it returns the value's end when it walked
// the value itself, or -1 to have it skipped.
func (v *validator) walk(s int, descend func(key []byte, vs int) int, kids []span) []span {
	doc := v.doc
	i := s + 1
	for doc[i] != '}' {
		c := span{ks: i}
		i = skipString(doc, i) + 1
		c.s = i
		c.e = -1
		if descend != nil {
			c.e = descend(doc[c.ks+1:c.s-2], i)
		}
		if c.e < 0 {
			c.e = skipValue(doc, i)
		}
		i = c.e
		kids = append(kids, c)
		if doc[i] == ',' {
			i++
		}
	}
	return kids
}

// field returns the value of member name among kids. The field names need
// no escaping, so the canonical key text is compared directly.
func (v *validator) field(kids []span, name string) (span, bool) {
	for _, k := range kids {
		if string(v.doc[k.ks+1:k.s-2]) == name {
			return k, true
		}
	}
	return span{}, false
}

// data checks the data object at s and returns its end.
func (v *validator) data(s int) (int, []Violation) {
	d := validator{doc: v.doc}
	var book []Violation
	kids := d.walk(s, func(key []byte, vs int) int {
		if string(key) == "character_book" && d.doc[vs] == '{' {
			var end int
			end, book = d.book(vs)
			return end
		}
		return -1
	}, nil)
	for _, f := range requiredStrings {
		d.check(kids, "/data", f, true, '"')
	}
	if n, ok := d.field(kids, "name"); ok && d.doc[n.s] == '"' {
		if strings.TrimSpace(string(appendUnescaped(nil, d.doc[n.s+1:n.e-1]))) == "" {
			d.add("/data/name", "must not be blank")
		}
	}
	d.strings(kids, "/data", "alternate_greetings", true)
	d.strings(kids, "/data", "tags", true)
	d.check(kids, "/data", "extensions", true, '{')
	if b, ok := d.field(kids, "character_book"); ok && d.kind(b) != '{' {
		d.add("/data/character_book", "must be an object, not "+d.typeOf(b))
	}
	return containerEnd(kids, s), append(d.out, book...)
}

// book checks the character_book object at s and returns its end.
func (v *validator) book(s int) (int, []Violation) {
	const at = "/data/character_book"
	b := validator{doc: v.doc}
	var entries []Violation
	haveEntries := false
	kids := b.walk(s, func(key []byte, vs int) int {
		if string(key) == "entries" && b.doc[vs] == '[' {
			haveEntries = true
			var end int
			end, entries = b.entries(vs, at+"/entries/")
			return end
		}
		return -1
	}, nil)
	b.check(kids, at, "name", false, '"')
	b.check(kids, at, "description", false, '"')
	b.check(kids, at, "scan_depth", false, '0')
	b.check(kids, at, "token_budget", false, '0')
	b.check(kids, at, "recursive_scanning", false, 't')
	b.check(kids, at, "extensions", true, '{')
	if !haveEntries {
		b.add(at+"/entries", "must be an array")
	}
	return containerEnd(kids, s), append(b.out, entries...)
}

// containerEnd is the end of the object at s whose members are kids.
func containerEnd(kids []span, s int) int {
	if len(kids) == 0 {
		return s + 2
	}
	return kids[len(kids)-1].e + 1
}

// entries checks the entries array at s and returns its end.
func (v *validator) entries(s int, at string) (int, []Violation) {
	doc := v.doc
	e := validator{doc: doc}
	var kids []span
	i := s + 1
	for n := 0; doc[i] != ']'; n++ {
		ptr := at + strconv.Itoa(n)
		if doc[i] == '{' {
			kids = e.walk(i, nil, kids[:0])
			e.entry(kids, ptr)
			i = containerEnd(kids, i)
		} else {
			e.add(ptr, "must be an object, not "+e.typeOf(span{i, i, i}))
			i = skipValue(doc, i)
		}
		if doc[i] == ',' {
			i++
		}
	}
	return i + 1, e.out
}

func (v *validator) entry(kids []span, at string) {
	v.strings(kids, at, "keys", true)
	v.check(kids, at, "content", true, '"')
	v.check(kids, at, "extensions", true, '{')
	v.check(kids, at, "enabled", true, 't')
	v.check(kids, at, "insertion_order", true, '0')
	v.check(kids, at, "case_sensitive", false, 't')
	v.check(kids, at, "name", false, '"')
	v.check(kids, at, "priority", false, '0')
	v.check(kids, at, "id", false, '0')
	v.check(kids, at, "comment", false, '"')
	v.check(kids, at, "selective", false, 't')
	v.check(kids, at, "constant", false, 't')
	v.strings(kids, at, "secondary_keys", false)
	if p, ok := v.field(kids, "position"); ok {
		if s := string(v.doc[p.s:p.e]); s != `"before_char"` && s != `"after_char"` {
			v.add(at+"/position", `must be "before_char" or "after_char"`)
		}
	}
}

// kind classifies a canonical value by its first byte: '"' string, '{'
// object, '[' array, 't' boolean, 'n' null, '0' number.
func (v *validator) kind(s span) byte {
	switch b := v.doc[s.s]; b {
	case '"', '{', '[', 'n':
		return b
	case 't', 'f':
		return 't'
	}
	return '0'
}

var kindNames = map[byte]string{'"': "a string", '{': "an object", '[': "an array", 't': "a boolean", 'n': "null", '0': "a number"}

func (v *validator) typeOf(s span) string { return kindNames[v.kind(s)] }

// check reports field of kids when it is missing (and required) or is not
// of the wanted kind.
func (v *validator) check(kids []span, at, field string, required bool, want byte) {
	s, present := v.field(kids, field)
	switch {
	case !present && required:
		v.add(at+"/"+field, "is required and must be "+kindNames[want])
	case present && v.kind(s) != want:
		v.add(at+"/"+field, "must be "+kindNames[want]+", not "+v.typeOf(s))
	}
}

func (v *validator) strings(kids []span, at, field string, required bool) {
	s, present := v.field(kids, field)
	switch {
	case !present && required:
		v.add(at+"/"+field, "is required and must be an array of strings")
		return
	case !present:
		return
	case v.kind(s) != '[':
		v.add(at+"/"+field, "must be an array of strings, not "+v.typeOf(s))
		return
	}
	for i, e := range children(v.doc, s.s, nil) {
		if v.kind(e) != '"' {
			v.add(at+"/"+field+"/"+strconv.Itoa(i), "must be a string, not "+v.typeOf(e))
		}
	}
}
