package card

import (
	"strconv"
	"strings"
)

// Validate checks the Character Card V2 rules the engine enforces
// (docs/rpengine-protocol.md, "Cards and hashes") and returns nil or a *[ValidationError] listing every
// violation, each with its JSON Pointer. Unlike the engine, which stops at
// the first, it reports them all. The rules are checked by Parse, on the
// canonical form it hashes, so Validate costs nothing.
func (c *Card) Validate() error {
	if c.valid {
		return nil
	}
	l := c.computed()
	l.validOnce.Do(func() {
		// Parse found the card in the memo as invalid: check it again to
		// list the violations.
		l.violations = validateCanonical(c.canonical())
	})
	return &ValidationError{Violations: l.violations}
}

// The fields of data that must be strings, in the engine's order.
var requiredStrings = []string{"name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes", "system_prompt", "post_history_instructions", "creator", "character_version"}

// validateCanonical checks the rules on a canonical document whose root is
// an object. It walks the bytes once: containers the rules look into
// (data, the book, its entries) are walked where they are met, everything
// else is skipped, and the violations are put in rule order afterwards.
// A valid card costs no allocation beyond the shared scratch stack.
func validateCanonical(doc []byte) []Violation {
	st := &vstate{doc: doc}
	v := validator{vstate: st}
	kids, mark, nested := v.walk(0, levelRoot)
	defer st.release(mark)
	if s, ok := v.field(kids, "spec"); !ok || string(doc[s.s:s.e]) != `"chara_card_v2"` {
		v.add("/spec", `must be "chara_card_v2"`)
	}
	if s, ok := v.field(kids, "spec_version"); !ok || string(doc[s.s:s.e]) != `"2.0"` {
		v.add("/spec_version", `must be the string "2.0"`)
	}
	if d, ok := v.field(kids, "data"); !ok || doc[d.s] != '{' {
		v.add("/data", "must be an object")
	}
	return append(v.out, nested...)
}

// vstate is shared by the validators of one document.
type vstate struct {
	doc   []byte
	stack []span // children lists of the containers being checked
}

func (st *vstate) release(mark int) { st.stack = st.stack[:mark] }

type validator struct {
	*vstate
	out []Violation
}

func (v *validator) add(ptr, msg string) {
	v.out = append(v.out, Violation{Pointer: ptr, Message: msg})
}

// The containers the rules look into, by depth.
const (
	levelRoot  = iota // descends into data
	levelData         // descends into character_book
	levelBook         // descends into entries
	levelEntry        // descends into nothing
)

// walk lists the members of the object at s on the scratch stack, walking
// the one member the level's rules look into (and collecting its
// violations in nested) and skipping the others. The caller releases
// the stack to mark when done with kids.
func (v *validator) walk(s, level int) (kids []span, mark int, nested []Violation) {
	doc := v.doc
	mark = len(v.stack)
	i := s + 1
	for doc[i] != '}' {
		c := span{ks: i}
		i = skipString(doc, i) + 1
		c.s = i
		c.e = -1
		switch key := string(doc[c.ks+1 : c.s-2]); {
		case level == levelRoot && key == "data" && doc[i] == '{':
			c.e, nested = v.data(i)
		case level == levelData && key == "character_book" && doc[i] == '{':
			c.e, nested = v.book(i)
		case level == levelBook && key == "entries" && doc[i] == '[':
			c.e, nested = v.entries(i, "/data/character_book/entries/")
		default:
			c.e = skipValue(doc, i)
		}
		i = c.e
		v.stack = append(v.stack, c)
		if doc[i] == ',' {
			i++
		}
	}
	return v.stack[mark:], mark, nested
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

// containerEnd is the end of the object at s whose members are kids.
func containerEnd(kids []span, s int) int {
	if len(kids) == 0 {
		return s + 2
	}
	return kids[len(kids)-1].e + 1
}

// data checks the data object at s and returns its end.
func (v *validator) data(s int) (int, []Violation) {
	d := validator{vstate: v.vstate}
	kids, mark, book := d.walk(s, levelData)
	defer d.release(mark)
	for _, f := range requiredStrings {
		d.check(kids, "/data", f, true, '"')
	}
	if n, ok := d.field(kids, "name"); ok && d.doc[n.s] == '"' && blank(d.doc[n.s+1:n.e-1]) {
		d.add("/data/name", "must not be blank")
	}
	d.strings(kids, "/data", "alternate_greetings", true)
	d.strings(kids, "/data", "tags", true)
	d.check(kids, "/data", "extensions", true, '{')
	if b, ok := d.field(kids, "character_book"); ok && d.kind(b) != '{' {
		d.add("/data/character_book", "must be an object, not "+d.typeOf(b))
	}
	return containerEnd(kids, s), append(d.out, book...)
}

// blank reports whether a canonical string body is empty or white space.
func blank(body []byte) bool {
	for _, b := range body {
		if b == '\\' {
			break // an escape: decode below
		}
		if b > ' ' && b < 0x80 {
			return false // the common case: a visible ASCII character
		}
	}
	return strings.TrimSpace(string(appendUnescaped(nil, body))) == ""
}

// book checks the character_book object at s and returns its end.
func (v *validator) book(s int) (int, []Violation) {
	const at = "/data/character_book"
	b := validator{vstate: v.vstate}
	kids, mark, entries := b.walk(s, levelBook)
	defer b.release(mark)
	b.check(kids, at, "name", false, '"')
	b.check(kids, at, "description", false, '"')
	b.check(kids, at, "scan_depth", false, '0')
	b.check(kids, at, "token_budget", false, '0')
	b.check(kids, at, "recursive_scanning", false, 't')
	b.check(kids, at, "extensions", true, '{')
	if e, ok := b.field(kids, "entries"); !ok || b.doc[e.s] != '[' {
		b.add(at+"/entries", "must be an array")
	}
	return containerEnd(kids, s), append(b.out, entries...)
}

// entries checks the entries array at s and returns its end. An entry's
// pointer is only built when the entry has a violation.
func (v *validator) entries(s int, at string) (int, []Violation) {
	doc := v.doc
	var out []Violation
	i := s + 1
	for n := 0; doc[i] != ']'; n++ {
		e := validator{vstate: v.vstate}
		if doc[i] == '{' {
			kids, mark, _ := e.walk(i, levelEntry)
			e.entry(kids, "")
			i = containerEnd(kids, i)
			e.release(mark)
		} else {
			e.add("", "must be an object, not "+e.typeOf(span{i, i, i}))
			i = skipValue(doc, i)
		}
		for _, x := range e.out {
			x.Pointer = at + strconv.Itoa(n) + x.Pointer
			out = append(out, x)
		}
		if doc[i] == ',' {
			i++
		}
	}
	return i + 1, out
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
	mark := len(v.stack)
	v.stack = children(v.doc, s.s, v.stack)
	for i, e := range v.stack[mark:] {
		if v.kind(e) != '"' {
			v.add(at+"/"+field+"/"+strconv.Itoa(i), "must be a string, not "+v.typeOf(e))
		}
	}
	v.release(mark)
}
