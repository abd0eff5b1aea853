package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
)

// Diff returns an RFC 6902 patch that turns base into target, verified:
// applied to base it yields a document with target's hash. The patch uses
// add, remove and replace only, and its values are canonical JSON, so for
// a target that is not hash-safe ([Card.CheckNumbers]) its numbers are the
// RFC 8785 forms (1.0 becomes 1; integers beyond 2^53 are rounded).
//
// Its work is bounded by the sizes of the two cards: where a finer patch
// would cost more (documents nested very deep) or be larger than the
// target itself several times over, the patch replaces the whole
// document.
func Diff(base, target *Card) (json.RawMessage, error) {
	if base == nil || target == nil {
		return nil, errors.New("card: diff: nil card")
	}
	want, _ := target.canonical()
	if p, ok := planPatch(base, want, 4*len(want)+1024); ok {
		return p, nil
	}
	p := append([]byte(`[{"op":"replace","path":"","value":`), want...)
	return append(p, "}]"...), nil
}

// planPatch returns a verified patch from base to the canonical target,
// shorter than limit bytes, or false: the patch would not be, or its
// work bound was reached. The patch is verified by applying it to base:
// the result must be the target, whose SHA-256 is its digest; comparing
// the bytes proves the same as hashing them.
func planPatch(base *Card, target []byte, limit int) ([]byte, bool) {
	a, big := base.canonical()
	g := newDiffer(a, big, target, limit)
	g.value(0, 0)
	g.out = append(g.out, ']')
	if g.over || len(g.out) >= limit || !verify(a, big, g.out, target) {
		return nil, false
	}
	return g.out, true
}

// differ writes add, remove and replace operations turning a into b, both
// canonical: equal values are equal bytes, objects merge like sorted
// lists, arrays keep their common head and tail and change the middle.
// Before the first differing byte (the common prefix) it reads only a,
// going straight down the containers open there (ppath, one reading of
// the prefix); from where the rest of a equals the rest of b (the common
// suffix) nothing is left to do. Its work is the bytes it skips over;
// past a bound in proportion to the two documents it stops, as it does
// once its output reaches limit.
type differ struct {
	a, b  []byte
	big   index // of a
	pre   int   // length of the common prefix
	suf   int   // length of the common suffix, not overlapping pre
	shift int   // len(b) - len(a)
	ppath []prefixEntry
	depth int // of the container being diffed
	path  []byte
	out   []byte
	limit int
	work  int // bytes skipped, up to the bound
	bound int
	over  bool
}

func newDiffer(a []byte, big index, b []byte, limit int) *differ {
	n := min(len(a), len(b))
	pre := 0
	for pre+64 <= n && bytes.Equal(a[pre:pre+64], b[pre:pre+64]) { // vectorized
		pre += 64
	}
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf+64 <= n-pre && bytes.Equal(a[len(a)-suf-64:len(a)-suf], b[len(b)-suf-64:len(b)-suf]) {
		suf += 64
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	g := &differ{a: a, big: big, b: b, pre: pre, suf: suf, shift: len(b) - len(a), limit: limit, bound: 8*(len(a)+len(b)) + 1<<16}
	g.out = append(make([]byte, 0, 256), '[')
	g.ppath = prefixPath(a, big, pre)
	return g
}

// prefixEntry is a container open at the end of the common prefix: where
// it starts, and the start (a member's name, or an element) and index of
// its child that holds the end of the prefix.
type prefixEntry struct{ start, child, index int }

// prefixPath lists the containers of the canonical doc, whose index is
// big, open at offset pre, outermost first.
func prefixPath(doc []byte, big index, pre int) []prefixEntry {
	var out []prefixEntry
	for i := 0; i < pre; i++ {
		for i < pre && !structural[doc[i]] && doc[i] != ',' {
			i++
		}
		if i == pre {
			break
		}
		switch doc[i] {
		case '"':
			i = skipString(doc, i) - 1
		case '{', '[':
			if e, ok := big.end(i); ok && e <= pre {
				i = e - 1 // closed before the end of the prefix
				continue
			}
			out = append(out, prefixEntry{start: i, child: i + 1})
		case '}', ']':
			out = out[:len(out)-1]
		case ',':
			e := &out[len(out)-1]
			e.child, e.index = i+1, e.index+1
		}
	}
	return out
}

// skip returns the end of the value at doc[i] and counts the work.
func (g *differ) skip(doc []byte, i int) int {
	if &doc[0] == &g.a[0] {
		if e, ok := g.big.end(i); ok {
			return e
		}
	}
	e := skipValue(doc, i)
	if g.work += e - i; g.work > g.bound {
		g.over = true
	}
	return e
}

// onPath returns the entry of the container at xs when it is open at the
// end of the common prefix.
func (g *differ) onPath(xs int) (prefixEntry, bool) {
	if g.depth < len(g.ppath) && g.ppath[g.depth].start == xs {
		return g.ppath[g.depth], true
	}
	return prefixEntry{}, false
}

// rest reports whether everything from a[i] on equals everything from
// b[j], or the differ has stopped.
func (g *differ) rest(i, j int) bool {
	return g.over || (j == i+g.shift && i >= len(g.a)-g.suf)
}

func (g *differ) op(op string, value []byte) {
	if len(g.out) > 1 {
		g.out = append(g.out, ',')
	}
	g.out = append(append(append(g.out, `{"op":"`...), op...), `","path":`...)
	g.out = jcs.AppendString(g.out, g.path)
	if value != nil {
		g.out = append(append(g.out, `,"value":`...), value...)
	}
	if g.out = append(g.out, '}'); len(g.out) >= g.limit {
		g.over = true
	}
}

// push appends the token tok to the path and returns the path's length
// before it.
func (g *differ) push(tok []byte) int {
	n := len(g.path)
	if bytes.IndexByte(tok, '~') < 0 && bytes.IndexByte(tok, '/') < 0 {
		g.path = append(append(g.path, '/'), tok...)
	} else {
		g.path = append(append(g.path, '/'), escapeToken(string(tok))...)
	}
	return n
}

// next skips the comma after a value ending at e.
func next(doc []byte, e int) int {
	if e < len(doc) && doc[e] == ',' {
		return e + 1
	}
	return e
}

// name returns the unescaped name of the member whose name is doc[ks:ke].
func name(doc []byte, ks, ke int) []byte {
	if k := doc[ks+1 : ke-1]; bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	return jcs.Unquote(nil, doc[ks+1:ke-1])
}

// value diffs a's value at xs with b's value at ys and returns their ends,
// or done when the rest of both documents is equal (or the differ
// stopped).
func (g *differ) value(xs, ys int) (xe, ye int, done bool) {
	if g.rest(xs, ys) {
		return 0, 0, true
	}
	if xs == ys && xs < g.pre {
		// The value is b's too only if the byte after it is common as
		// well: a number has no closing delimiter, so a's 1 may be the
		// start of b's 10 (found by FuzzDiff). A container on the path
		// to the first difference is not: it holds it.
		if _, ok := g.onPath(xs); !ok {
			if xe = g.skip(g.a, xs); xe < g.pre {
				return xe, xe, false
			}
		}
	}
	switch ca, cb := g.a[xs], g.b[ys]; {
	case ca == '{' && cb == '{':
		return g.object(xs, ys)
	case ca == '[' && cb == '[':
		return g.array(xs, ys)
	}
	xe, ye = g.skip(g.a, xs), g.skip(g.b, ys)
	if !bytes.Equal(g.a[xs:xe], g.b[ys:ye]) {
		g.op("replace", g.b[ys:ye])
	}
	return xe, ye, false
}

// object merges the members of the objects at xs and ys by name.
func (g *differ) object(xs, ys int) (xe, ye int, done bool) {
	a, b := g.a, g.b
	i, j := xs+1, ys+1
	if p, ok := g.onPath(xs); ok && xs == ys {
		i, j = p.child, p.child // the members before it are equal
	}
	g.depth++
	defer func() { g.depth-- }()
	for {
		if g.rest(i, j) {
			return 0, 0, true
		}
		endA, endB := a[i] == '}', b[j] == '}'
		if endA && endB {
			return i + 1, j + 1, false
		}
		var kae, kbe, cmp int
		if !endA {
			kae = skipString(a, i)
		}
		if !endB {
			kbe = skipString(b, j)
		}
		switch {
		case endA:
			cmp = 1
		case endB:
			cmp = -1
		default:
			cmp = jcs.Compare(name(a, i, kae), name(b, j, kbe))
		}
		switch {
		case cmp < 0:
			n := g.push(name(a, i, kae))
			g.op("remove", nil)
			g.path = g.path[:n]
			i = next(a, g.skip(a, kae+1))
		case cmp > 0:
			n := g.push(name(b, j, kbe))
			ve := g.skip(b, kbe+1)
			g.op("add", b[kbe+1:ve])
			g.path = g.path[:n]
			j = next(b, ve)
		default:
			n := g.push(name(a, i, kae))
			xe, ye, done := g.value(kae+1, kbe+1)
			g.path = g.path[:n]
			if done {
				return 0, 0, true
			}
			i, j = next(a, xe), next(b, ye)
		}
	}
}

// elements lists the starts and ends of the elements from position i of
// an array up to its end, and returns the position after the ']'.
func (g *differ) elements(doc []byte, i int) ([][2]int, int) {
	out := make([][2]int, 0, 8)
	for doc[i] != ']' && !g.over {
		e := g.skip(doc, i)
		out = append(out, [2]int{i, e})
		i = next(doc, e)
	}
	return out, i + 1
}

// array skips the equal leading elements, then keeps the common head and
// tail of the rest, diffs the middle pairwise, and removes or adds what
// is left over.
func (g *differ) array(xs, ys int) (xe, ye int, done bool) {
	a, b := g.a, g.b
	i, j, idx := xs+1, ys+1, 0
	if p, ok := g.onPath(xs); ok && xs == ys {
		i, j, idx = p.child, p.child, p.index // the elements before it are equal
	}
	g.depth++
	defer func() { g.depth-- }()
	for a[i] != ']' && b[j] != ']' && i == j && i < g.pre {
		if _, ok := g.onPath(i); ok {
			break // it holds the first difference
		}
		e := g.skip(a, i)
		if e >= g.pre { // as in value: the byte after it must be common too
			break
		}
		i, j, idx = next(a, e), next(b, e), idx+1
	}
	if g.rest(i, j) {
		return 0, 0, true
	}
	ea, xe := g.elements(a, i)
	eb, ye := g.elements(b, j)
	if g.over {
		return 0, 0, true
	}
	eq := func(x, y [2]int) bool { return bytes.Equal(a[x[0]:x[1]], b[y[0]:y[1]]) }
	p := 0
	for p < len(ea) && p < len(eb) && eq(ea[p], eb[p]) {
		p++
	}
	s := 0
	for s < len(ea)-p && s < len(eb)-p && eq(ea[len(ea)-1-s], eb[len(eb)-1-s]) {
		s++
	}
	na, nb := len(ea)-p-s, len(eb)-p-s
	m := min(na, nb)
	at := func(k int) int { return g.push(strconv.AppendInt(nil, int64(idx+p+k), 10)) }
	for k := 0; k < m; k++ {
		n := at(k)
		_, _, done := g.value(ea[p+k][0], eb[p+k][0])
		g.path = g.path[:n]
		if done {
			return 0, 0, true // the rest is equal, so na == nb
		}
	}
	for k := na - 1; k >= m && !g.over; k-- {
		n := at(k)
		g.op("remove", nil)
		g.path = g.path[:n]
	}
	for k := m; k < nb && !g.over; k++ {
		n := at(k)
		g.op("add", b[eb[p+k][0]:eb[p+k][1]])
		g.path = g.path[:n]
	}
	return xe, ye, g.over
}
