package card

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// differ writes add, remove and replace operations turning a into b. Both
// are canonical, so equal values are equal bytes and members are sorted by
// key: objects are merged like sorted lists.
//
// It reads only what it must. Before the first differing byte of the two
// documents (the common prefix), a value of a is also b's value at the
// same offset, so only a is scanned. From the point where the rest of a
// equals the rest of b (the common suffix, aligned), nothing is left to
// do, so a one-field edit stops right after the changed field instead of
// scanning the remaining members of every enclosing container.
//
// The containers open at the end of the common prefix (the path to the
// first difference) are found by one scan of the prefix, with the child of
// each that holds the difference. The differ jumps straight to that child:
// the members and elements before it are equal, and skipping them one by
// one at each level scanned the prefix once per level.
type differ struct {
	a, b  []byte
	pre   int // length of the common prefix
	suf   int // length of the common suffix, not overlapping pre
	shift int // len(b) - len(a)
	ppath []prefixEntry
	depth int // of the container being diffed
	kids  []span
	path  []byte // current pointer, tokens escaped
	out   []byte
	limit int  // stop once out reaches this many bytes; negative: no limit
	over  bool // the limit was reached

	// First storage of out and ppath: a one-field edit needs no more.
	outBuf  [256]byte
	pathBuf [8]prefixEntry
}

func newDiffer(a, b []byte, limit int) *differ {
	n := min(len(a), len(b))
	pre := commonPrefix(a, b)
	suf := 0
	for suf+diffBlock <= n-pre && bytes.Equal(a[len(a)-suf-diffBlock:len(a)-suf], b[len(b)-suf-diffBlock:len(b)-suf]) {
		suf += diffBlock
	}
	for suf+8 <= n-pre && binary.LittleEndian.Uint64(a[len(a)-suf-8:]) == binary.LittleEndian.Uint64(b[len(b)-suf-8:]) {
		suf += 8
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	g := &differ{a: a, b: b, pre: pre, suf: suf, shift: len(b) - len(a), limit: limit}
	g.out = append(g.outBuf[:0], '[')
	g.ppath = prefixPath(a, pre, g.pathBuf[:0])
	return g
}

// diffBlock is the step of the common prefix and suffix search: blocks
// are compared with bytes.Equal (vectorized), then words, then bytes.
const diffBlock = 256

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	pre := 0
	for pre+diffBlock <= n && bytes.Equal(a[pre:pre+diffBlock], b[pre:pre+diffBlock]) {
		pre += diffBlock
	}
	for pre+8 <= n && binary.LittleEndian.Uint64(a[pre:]) == binary.LittleEndian.Uint64(b[pre:]) {
		pre += 8
	}
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	return pre
}

// prefixEntry is a container open at the end of the common prefix: where
// it starts, and the start (a member's key, or an element) and index of
// its child that holds the end of the prefix.
type prefixEntry struct{ start, child, index int }

// prefixPath lists the containers of the canonical doc open at offset pre,
// outermost first.
func prefixPath(doc []byte, pre int, out []prefixEntry) []prefixEntry {
	if hasAVX2 {
		return prefixPathFast(doc, pre, out)
	}
	return prefixPathGeneric(doc, pre, out)
}

// prefixPathGeneric is prefixPath a token at a time.
func prefixPathGeneric(doc []byte, pre int, out []prefixEntry) []prefixEntry {
	for i := 0; i < pre; {
		switch doc[i] {
		case '"':
			if e := skipShort(doc, i); e > 0 {
				i = e
			} else {
				i = skipString(doc, i)
			}
			continue
		case '{', '[':
			out = append(out, prefixEntry{start: i, child: i + 1})
		case '}', ']':
			out = out[:len(out)-1]
		case ',':
			e := &out[len(out)-1]
			e.child, e.index = i+1, e.index+1
		}
		i++
	}
	return out
}

// onPath returns the entry of the container at xs when it is open at the
// end of the common prefix.
func (g *differ) onPath(xs int) (prefixEntry, bool) {
	if g.depth < len(g.ppath) && g.ppath[g.depth].start == xs {
		return g.ppath[g.depth], true
	}
	return prefixEntry{}, false
}

// rest reports whether everything from a[i] on equals everything from b[j].
func (g *differ) rest(i, j int) bool {
	return g.over || (j == i+g.shift && i >= len(g.a)-g.suf)
}

func (g *differ) op(op string, value []byte) {
	if len(g.out) > 1 {
		g.out = append(g.out, ',')
	}
	g.out = append(g.out, `{"op":"`...)
	g.out = append(g.out, op...)
	g.out = append(g.out, `","path":`...)
	g.out = appendCanonicalBytes(g.out, g.path)
	if value != nil {
		g.out = append(g.out, `,"value":`...)
		g.out = append(g.out, value...)
	}
	g.out = append(g.out, '}')
	if g.limit >= 0 && len(g.out) >= g.limit {
		g.over = true
	}
}

func (g *differ) push(tok []byte) int {
	n := len(g.path)
	g.path = append(g.path, '/')
	if bytes.IndexByte(tok, '~') < 0 && bytes.IndexByte(tok, '/') < 0 {
		g.path = append(g.path, tok...)
	} else {
		g.path = append(g.path, escapeToken(string(tok))...)
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

// key returns the unescaped key of the member whose key string is
// doc[ks:ke].
func key(doc []byte, ks, ke int) []byte {
	k := doc[ks+1 : ke-1]
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	return appendUnescaped(nil, k)
}

// value diffs a's value at xs with b's value at ys and returns their ends,
// or done when the rest of both documents is equal (or the limit hit).
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
			if xe = skipValue(g.a, xs); xe < g.pre {
				return xe, xe, false // inside the common prefix
			}
		}
	}
	switch ca, cb := g.a[xs], g.b[ys]; {
	case ca == '{' && cb == '{':
		return g.object(xs, ys)
	case ca == '[' && cb == '[':
		return g.array(xs, ys)
	}
	xe, ye = skipValue(g.a, xs), skipValue(g.b, ys)
	if !bytes.Equal(g.a[xs:xe], g.b[ys:ye]) {
		g.op("replace", g.b[ys:ye])
	}
	return xe, ye, false
}

// object merges the members of the objects at xs and ys by key.
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
			cmp = compareUTF16(key(a, i, kae), key(b, j, kbe))
		}
		switch {
		case cmp < 0:
			n := g.push(key(a, i, kae))
			g.op("remove", nil)
			g.path = g.path[:n]
			i = next(a, skipValue(a, kae+1))
		case cmp > 0:
			n := g.push(key(b, j, kbe))
			ve := skipValue(b, kbe+1)
			g.op("add", b[kbe+1:ve])
			g.path = g.path[:n]
			j = next(b, ve)
		default:
			n := g.push(key(a, i, kae))
			xe, ye, done := g.value(kae+1, kbe+1)
			g.path = g.path[:n]
			if done {
				return 0, 0, true
			}
			i, j = next(a, xe), next(b, ye)
		}
	}
}

// elements lists the elements from position i of an array up to its end
// on the scratch stack and returns them with the position after the ']'.
func (g *differ) elements(doc []byte, i int) ([]span, int) {
	mark := len(g.kids)
	for doc[i] != ']' {
		e := skipValue(doc, i)
		g.kids = append(g.kids, span{i, i, e})
		i = next(doc, e)
	}
	return g.kids[mark:len(g.kids):len(g.kids)], i + 1
}

// array skips the equal leading elements, then keeps the common prefix and
// suffix of the rest, diffs the middle pairwise, and removes or adds what
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
		e := skipValue(a, i)
		if e >= g.pre { // as in value: the byte after it must be common too
			break
		}
		i, j, idx = next(a, e), next(b, e), idx+1
	}
	if g.rest(i, j) {
		return 0, 0, true
	}
	mark := len(g.kids)
	defer func() { g.kids = g.kids[:mark] }()
	ea, xe := g.elements(a, i)
	eb, ye := g.elements(b, j)
	eq := func(x, y span) bool { return bytes.Equal(a[x.s:x.e], b[y.s:y.e]) }
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
		_, _, done := g.value(ea[p+k].s, eb[p+k].s)
		g.path = g.path[:n]
		if done {
			return 0, 0, true // the rest is equal, so na == nb
		}
	}
	for k := na - 1; k >= m; k-- {
		n := at(k)
		g.op("remove", nil)
		g.path = g.path[:n]
	}
	for k := m; k < nb; k++ {
		n := at(k)
		e := eb[p+k]
		g.op("add", b[e.s:e.e])
		g.path = g.path[:n]
	}
	return xe, ye, g.over
}
