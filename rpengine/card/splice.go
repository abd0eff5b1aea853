package card

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
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

	// When want is set, the next splice compares its result with want
	// instead of making it, and same reports whether they are equal: the
	// verification of a generated patch (planPatch) need not copy the
	// card to compare it.
	want           []byte
	compared, same bool
}

// structural marks the bytes skipValue stops at inside a container.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipValue returns the end of the canonical value starting at i.
func skipValue(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth, start := 0, i
		for i < len(doc) {
			if hasAVX2 && i-start > 256 {
				// A large container (the lorebook): the rest 64 bytes a
				// step (structure.go).
				return closeAt(doc, i, depth)
			}
			for !structural[doc[i]] {
				i++
				if i == len(doc) {
					return i
				}
			}
			switch doc[i] {
			case '"':
				if e := skipShort(doc, i); e > 0 {
					i = e
				} else {
					i = skipString(doc, i)
				}
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

// skipString returns the end of the string starting at doc[i] == '"'.
// Most strings of a card are keys and short values: the first 16 bytes
// are searched for '"' and '\\' a word at a time. Past them it jumps from
// quote to quote (IndexByte is vectorized) and counts the backslashes
// before each: an even count means the quote is not escaped.
func skipString(doc []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i++
	for n := 0; n < 2 && i+8 <= len(doc); n++ {
		w := binary.LittleEndian.Uint64(doc[i:])
		q, e := w^(ones*'"'), w^(ones*'\\')
		m := ((q-ones)&^q | (e-ones)&^e) & highs
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if doc[i] == '"' {
			return i + 1
		}
		break // an escape: the backslash count below handles it
	}
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

// locate finds the child tok of the container at s. It reads the
// children only up to the one it looks for (members are in key order), so
// a lookup costs the bytes before its target, not the whole container.
// When the child is not there, c.ks is where it would be inserted: the
// start of the child it goes before, or the container's closing bracket.
// The end of the child found (c.e) is only read when end is set: finding
// it costs the bytes of the child, the whole card for /data.
func locate(doc []byte, s int, tok string, end bool) (c span, found bool, err error) {
	obj := doc[s] == '{'
	want := -1 // array index; -1 for "-"
	if !obj && tok != "-" {
		if !isIndex(tok) {
			return span{}, false, fmt.Errorf("%w: %q is not an array index", errPatchInvalid, tok)
		}
		want, _ = strconv.Atoi(tok)
	}
	i, n := s+1, 0
	for doc[i] != '}' && doc[i] != ']' {
		c = span{ks: i, s: i}
		if obj {
			ke := skipShort(doc, i)
			if ke == 0 {
				ke = skipString(doc, i)
			}
			c.s = ke + 1 // past ':'
			switch cmp := compareUTF16(key(doc, i, ke), []byte(tok)); {
			case cmp > 0:
				return span{ks: i}, false, nil
			case cmp == 0:
				if end {
					c.e = skipValue(doc, c.s)
				}
				return c, true, nil
			}
		} else if n == want {
			if end {
				c.e = skipValue(doc, i)
			}
			return c, true, nil
		}
		i = next(doc, skipValue(doc, c.s))
		n++
	}
	if want > n {
		return span{}, false, fmt.Errorf("%w: index %d out of range (length %d)", errPathMissing, want, n)
	}
	return span{ks: i}, false, nil
}

// lookup returns the span of the value at toks.
func (sp *splicer) lookup(toks []string) (span, error) { return sp.find(toks, true) }

// find returns the span of the value at toks; its end (e) only when end
// is set.
func (sp *splicer) find(toks []string, end bool) (span, error) {
	v := span{0, 0, len(sp.doc)}
	for k, tok := range toks {
		if sp.doc[v.s] != '{' && sp.doc[v.s] != '[' {
			return v, fmt.Errorf("%w: %q is inside a scalar", errPathMissing, tok)
		}
		c, ok, err := locate(sp.doc, v.s, tok, end && k == len(toks)-1)
		if err != nil {
			return v, err
		}
		if !ok {
			return v, fmt.Errorf("%w: no member %q", errPathMissing, tok)
		}
		v = c
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
	if want := sp.want; want != nil {
		sp.want, sp.compared = nil, true
		sp.same = n == len(want) && bytes.Equal(sp.doc[:s], want[:s])
		at := s
		for _, p := range parts {
			sp.same = sp.same && bytes.Equal(p, want[at:at+len(p)])
			at += len(p)
		}
		sp.same = sp.same && bytes.Equal(sp.doc[e:], want[at:])
		return nil
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
	parent, err := sp.find(toks[:len(toks)-1], false)
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
	c, found, err := locate(sp.doc, parent.s, tok, true)
	if err != nil {
		return err
	}
	if found && (obj || replace) {
		return sp.splice(c.s, c.e, value)
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
	switch at := c.ks; {
	case sp.doc[at] != '}' && sp.doc[at] != ']':
		return sp.splice(at, at, item, []byte{','}) // before the child at
	case sp.doc[at-1] != '{' && sp.doc[at-1] != '[':
		return sp.splice(at, at, []byte{','}, item) // after the last child
	}
	return sp.splice(c.ks, c.ks, item) // into an empty container
}

func (sp *splicer) remove(toks []string) error {
	if len(toks) == 0 {
		return fmt.Errorf("%w: cannot remove the root", errPatchInvalid)
	}
	parent, err := sp.find(toks[:len(toks)-1], false)
	if err != nil {
		return err
	}
	if sp.doc[parent.s] != '{' && sp.doc[parent.s] != '[' {
		return fmt.Errorf("%w: parent is not a container", errPathMissing)
	}
	c, found, err := locate(sp.doc, parent.s, toks[len(toks)-1], true)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: nothing to remove", errPathMissing)
	}
	switch {
	case sp.doc[c.e] == ',':
		return sp.splice(c.ks, c.e+1) // the comma after it
	case sp.doc[c.ks-1] == ',':
		return sp.splice(c.ks-1, c.e) // the comma before it
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

// appendCanonicalBytes is appendCanonicalString for s in a byte slice.
func appendCanonicalBytes(dst, s []byte) []byte {
	dst = append(dst, '"')
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		dst = appendEscapedRune(dst, r)
		s = s[n:]
	}
	return append(dst, '"')
}

// appendCanonicalString appends s as an RFC 8785 JSON string.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		dst = appendEscapedRune(dst, r)
	}
	return append(dst, '"')
}

// skipShort returns the end of the string at doc[i] when it closes within
// its first 8 bytes without a backslash (most keys and many values), else
// 0. It is small enough to be inlined into the scanning loops, which then
// call skipString only for the other strings.
func skipShort(doc []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if i+9 > len(doc) {
		return 0
	}
	w := binary.LittleEndian.Uint64(doc[i+1:])
	q, e := w^(ones*'"'), w^(ones*'\\')
	if m := ((q-ones)&^q | (e-ones)&^e) & highs; m != 0 {
		if j := i + 1 + bits.TrailingZeros64(m)>>3; doc[j] == '"' {
			return j + 1
		}
	}
	return 0
}
