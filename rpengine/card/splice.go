package card

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// The applier below works on canonical JSON bytes: every value it inserts is
// canonical and object members are inserted at their sorted position, so
// its output is canonical again without a second pass. It is the strict
// RFC 6902/6901 reference the evanphx wrapper is checked against, and the
// fast verifier of generated patches.

var (
	errPatchInvalid = errors.New("invalid operation")
	errPathMissing  = errors.New("path does not exist")
	errTestFailed   = errors.New("test failed")
	errCopyTooLarge = errors.New("result exceeds the size limit")
)

type splicer struct {
	doc   []byte
	limit int // largest doc allowed after an op
}

// structural marks the bytes skipValue stops at inside a container.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipValue returns the end of the canonical value starting at i.
func skipValue(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for i < len(doc) {
			for !structural[doc[i]] {
				i++
				if i == len(doc) {
					return i
				}
			}
			switch doc[i] {
			case '"':
				i = skipString(doc, i)
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(doc) && doc[i] != ',' && doc[i] != '}' && doc[i] != ']' {
		i++
	}
	return i
}

// skipString returns the end of the string starting at doc[i] == '"'. It
// jumps from quote to quote (IndexByte is vectorized) and counts the
// backslashes before each: an even count means the quote is not escaped.
func skipString(doc []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(doc[i:], '"')
		if j < 0 {
			return len(doc)
		}
		i += j
		k := i - 1
		for doc[k] == '\\' { // stops at the opening quote at the latest
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// span is a value's position in the document; for an object member, ks is
// where its key starts (else ks == s).
type span struct{ ks, s, e int }

// children lists the members or elements of the container at s.
func children(doc []byte, s int, out []span) []span {
	i := s + 1
	obj := doc[s] == '{'
	for doc[i] != '}' && doc[i] != ']' {
		c := span{ks: i}
		if obj {
			i = skipString(doc, i) + 1 // past ':'
		}
		c.s = i
		i = skipValue(doc, i)
		c.e = i
		out = append(out, c)
		if doc[i] == ',' {
			i++
		}
	}
	return out
}

// keyOf returns the unescaped key of member c.
func keyOf(doc []byte, c span) []byte {
	k := doc[c.ks+1 : c.s-2]
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	return appendUnescaped(nil, k)
}

// find returns the child of container v addressed by tok, and the index at
// which it is or would be inserted (members in key order).
func find(doc []byte, v span, tok string, kids []span) (kids2 []span, at int, found bool, err error) {
	kids = children(doc, v.s, kids[:0])
	if doc[v.s] == '{' {
		for i, c := range kids {
			switch cmp := compareUTF16(keyOf(doc, c), []byte(tok)); {
			case cmp == 0:
				return kids, i, true, nil
			case cmp > 0:
				return kids, i, false, nil
			}
		}
		return kids, len(kids), false, nil
	}
	if tok == "-" {
		return kids, len(kids), false, nil
	}
	if !isIndex(tok) {
		return kids, 0, false, fmt.Errorf("%w: %q is not an array index", errPatchInvalid, tok)
	}
	n, _ := strconv.Atoi(tok)
	if n > len(kids) {
		return kids, 0, false, fmt.Errorf("%w: index %d out of range (length %d)", errPathMissing, n, len(kids))
	}
	return kids, n, n < len(kids), nil
}

// lookup returns the span of the value at toks.
func (sp *splicer) lookup(toks []string) (span, error) {
	v := span{0, 0, len(sp.doc)}
	var kids []span
	for _, tok := range toks {
		if sp.doc[v.s] != '{' && sp.doc[v.s] != '[' {
			return v, fmt.Errorf("%w: %q is inside a scalar", errPathMissing, tok)
		}
		var at int
		var ok bool
		var err error
		kids, at, ok, err = find(sp.doc, v, tok, kids)
		if err != nil {
			return v, err
		}
		if !ok {
			return v, fmt.Errorf("%w: no member %q", errPathMissing, tok)
		}
		v = kids[at]
	}
	return v, nil
}

func (sp *splicer) splice(s, e int, parts ...[]byte) error {
	n := len(sp.doc) - (e - s)
	for _, p := range parts {
		n += len(p)
	}
	if n > sp.limit {
		return fmt.Errorf("%w: %d bytes", errCopyTooLarge, n)
	}
	out := make([]byte, 0, n)
	out = append(out, sp.doc[:s]...)
	for _, p := range parts {
		out = append(out, p...)
	}
	sp.doc = append(out, sp.doc[e:]...)
	return nil
}

// add implements RFC 6902 add; replace requires the target to exist.
func (sp *splicer) add(toks []string, value []byte, replace bool) error {
	if len(toks) == 0 {
		return sp.splice(0, len(sp.doc), value)
	}
	parent, err := sp.lookup(toks[:len(toks)-1])
	if err != nil {
		return err
	}
	if sp.doc[parent.s] != '{' && sp.doc[parent.s] != '[' {
		return fmt.Errorf("%w: parent is not a container", errPathMissing)
	}
	tok := toks[len(toks)-1]
	obj := sp.doc[parent.s] == '{'
	if replace && !obj && tok == "-" {
		return fmt.Errorf("%w: '-' names no element", errPathMissing)
	}
	kids, at, found, err := find(sp.doc, parent, tok, nil)
	if err != nil {
		return err
	}
	if found && (obj || replace) {
		return sp.splice(kids[at].s, kids[at].e, value)
	}
	if replace {
		return fmt.Errorf("%w: nothing to replace", errPathMissing)
	}
	var item []byte
	if obj {
		item = appendCanonicalString(nil, tok)
		item = append(item, ':')
	}
	item = append(item, value...)
	switch {
	case at < len(kids):
		return sp.splice(kids[at].ks, kids[at].ks, item, []byte{','})
	case len(kids) > 0:
		return sp.splice(parent.e-1, parent.e-1, []byte{','}, item)
	}
	return sp.splice(parent.e-1, parent.e-1, item)
}

func (sp *splicer) remove(toks []string) error {
	if len(toks) == 0 {
		return fmt.Errorf("%w: cannot remove the root", errPatchInvalid)
	}
	parent, err := sp.lookup(toks[:len(toks)-1])
	if err != nil {
		return err
	}
	if sp.doc[parent.s] != '{' && sp.doc[parent.s] != '[' {
		return fmt.Errorf("%w: parent is not a container", errPathMissing)
	}
	kids, at, found, err := find(sp.doc, parent, toks[len(toks)-1], nil)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: nothing to remove", errPathMissing)
	}
	c := kids[at]
	switch {
	case at+1 < len(kids):
		return sp.splice(c.ks, kids[at+1].ks)
	case at > 0:
		return sp.splice(kids[at-1].e, c.e)
	}
	return sp.splice(c.ks, c.e)
}

// apply runs one operation.
func (sp *splicer) apply(op *patchOp) error {
	switch op.Op {
	case "add", "replace":
		return sp.add(op.path, op.Value, op.Op == "replace")
	case "remove":
		return sp.remove(op.path)
	case "test":
		v, err := sp.lookup(op.path)
		if err != nil {
			return err
		}
		if !bytes.Equal(sp.doc[v.s:v.e], op.Value) {
			return errTestFailed
		}
		return nil
	}
	v, err := sp.lookup(op.from)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	value := append([]byte(nil), sp.doc[v.s:v.e]...)
	if op.Op == "move" {
		if isPrefix(op.from, op.path) {
			if len(op.from) == len(op.path) {
				return nil
			}
			return fmt.Errorf("%w: cannot move a value into its own child", errPatchInvalid)
		}
		if err := sp.remove(op.from); err != nil {
			return err
		}
	}
	return sp.add(op.path, value, false)
}

func isPrefix(p, q []string) bool {
	if len(p) > len(q) {
		return false
	}
	for i := range p {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// appendCanonicalString appends s as an RFC 8785 JSON string.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		dst = appendEscapedRune(dst, r)
	}
	return append(dst, '"')
}
