package card

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
)

// The patch applier. It works on canonical JSON and keeps it canonical:
// a value stays the canonical bytes it was until an operation looks
// inside it; a container looked into holds its members or elements in
// an implicit treap, in order (members by name), whose pieces are runs
// of the source's items, kept as offsets, or single items an operation
// made or reached. An operation walks its path in O(log n) a level, a
// container is read once when first looked into, and the result is
// written once: time O((document + patch) log) and memory a few words a
// touched item, where applying to bytes copied the document once per
// operation (issue #30).

var (
	errPatchInvalid = errors.New("invalid operation")
	errPathMissing  = errors.New("path does not exist")
	errTestFailed   = errors.New("test failed")
	errCopyTooLarge = errors.New("result exceeds the size limit")
)

// value is a JSON value of the document being patched: canonical bytes
// (raw, at offset at of the document, or -1), or a container.
type value struct {
	raw []byte
	at  int
	c   *container
}

type container struct {
	obj  bool
	root *piece
	size int // bytes of the container's canonical form
}

// source is the items of a container as read: its bytes (at offset at
// of the document, or -1), item i from offs[i] to a byte before
// offs[i+1].
type source struct {
	src  []byte
	at   int
	offs []int32
}

// piece is a node of a container's treap: the items lo to hi-1 of src, or
// one item (src nil): val, and key for a member. 64 bytes: the treap of a
// long list stays in the caches longer.
type piece struct {
	src    *source
	lo, hi int32
	key    string
	val    *value
	n      int32 // items in the subtree
	pri    uint32
	l, r   *piece
}

func count(t *piece) int {
	if t == nil {
		return 0
	}
	return int(t.n)
}

// own is how many items t holds itself.
func (t *piece) own() int {
	if t.src == nil {
		return 1
	}
	return int(t.hi - t.lo)
}

func (t *piece) fix() *piece {
	t.n = int32(count(t.l) + t.own() + count(t.r))
	return t
}

// item returns where item i of the run t starts and ends.
func (t *piece) item(i int) (s, e int) {
	return int(t.src.offs[int(t.lo)+i]), int(t.src.offs[int(t.lo)+i+1]) - 1
}

// split splits t into its first k items and the rest.
func (p *patcher) split(t *piece, k int) (*piece, *piece) {
	if t == nil {
		return nil, nil
	}
	switch nl := count(t.l); {
	case k <= nl:
		a, b := p.split(t.l, k)
		t.l = b
		return a, t.fix()
	case k >= nl+t.own():
		a, b := p.split(t.r, k-nl-t.own())
		t.r = a
		return t.fix(), b
	default: // inside the run: two runs, the second with a priority of its own
		m := k - nl
		right := alloc(&p.pieces, piece{src: t.src, lo: t.lo + int32(m), hi: t.hi, pri: rand.Uint32()})
		l, r := t.l, t.r
		t.hi, t.l, t.r = t.lo+int32(m), nil, nil
		return merge(l, t.fix()), merge(right.fix(), r)
	}
}

func merge(a, b *piece) *piece {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.pri > b.pri:
		a.r = merge(a.r, b)
		return a.fix()
	}
	b.l = merge(a, b.l)
	return b.fix()
}

// itemKey returns the unescaped name of item i of the run t.
func (t *piece) itemKey(i int) []byte {
	s, _ := t.item(i)
	return name(t.src.src, s, skipString(t.src.src, s))
}

// rank returns the position of the member named key in the object's
// treap, or where it would go, and whether it is there.
func rank(t *piece, key []byte) (int, bool) {
	r := 0
	for t != nil {
		n := t.own()
		cmp := func(i int) int { // key against item i of t
			if t.src == nil {
				return jcs.Compare(key, t.key)
			}
			return jcs.Compare(key, t.itemKey(i))
		}
		switch {
		case cmp(0) < 0:
			t = t.l
		case cmp(n-1) > 0:
			r += count(t.l) + n
			t = t.r
		default: // in t: a binary search of its items
			i := sort.Search(n, func(i int) bool { return cmp(i) <= 0 })
			return r + count(t.l) + i, cmp(i) == 0
		}
	}
	return r, false
}

// patcher applies operations to one document.
type patcher struct {
	root  *value
	limit int   // largest document allowed after an operation
	big   index // of the document, or nil
	chain []*container

	// Pieces and values are made in blocks: the collector then sees one
	// object per block, where an operation made two or three.
	pieces []piece
	values []value
}

// alloc returns a new T, x, from the block of T's slab.
func alloc[T any](slab *[]T, x T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, 64)
	}
	t := &(*slab)[0]
	*slab = (*slab)[1:]
	*t = x
	return t
}

func newPatcher(doc []byte, big index, limit int) *patcher {
	return &patcher{root: &value{raw: doc, at: 0}, big: big, limit: limit}
}

// skip returns the end of the value at b[i], b at offset at of the
// document (or -1).
func (p *patcher) skip(b []byte, at, i int) int {
	if at >= 0 {
		if e, ok := p.big.end(at + i); ok {
			return e - at
		}
	}
	return skipValue(b, i)
}

func (v *value) size() int {
	if v.c != nil {
		return v.c.size
	}
	return len(v.raw)
}

// open returns v's container, reading it on first use; nil for a scalar.
func (p *patcher) open(v *value) *container {
	if v.c != nil || (v.raw[0] != '{' && v.raw[0] != '[') {
		return v.c
	}
	b := v.raw
	c := &container{obj: b[0] == '{', size: len(b)}
	var offs []int32
	i := 1
	for b[i] != '}' && b[i] != ']' {
		offs = append(offs, int32(i))
		if c.obj {
			i = skipString(b, i) + 1
		}
		if i = p.skip(b, v.at, i); b[i] == ',' {
			i++
		}
	}
	if offs != nil {
		src := &source{src: b, at: v.at, offs: append(offs, int32(i+1))}
		c.root = alloc(&p.pieces, piece{src: src, hi: int32(len(offs)), pri: rand.Uint32()}).fix()
	}
	v.c, v.raw = c, nil
	return c
}

// single isolates item i of the container as a piece of its own and
// returns it.
func (p *patcher) single(c *container, i int) *piece {
	a, b := p.split(c.root, i)
	m, rest := p.split(b, 1)
	if m.src != nil {
		src := m.src
		s, e := m.item(0)
		if c.obj {
			ke := skipString(src.src, s)
			m.key = text(src.src, s, ke)
			s = ke + 1
		}
		at := -1
		if src.at >= 0 {
			at = src.at + s
		}
		m.val, m.src = alloc(&p.values, value{raw: src.src[s:e], at: at}), nil
	}
	c.root = merge(merge(a, m), rest)
	return m
}

// itemSize is what an item adds to its container's bytes, its comma
// aside.
func itemSize(key string, obj bool, v *value) int {
	if !obj {
		return v.size()
	}
	return len(jcs.AppendString(nil, key)) + 1 + v.size()
}

// child finds the item tok of container c: its position and whether it
// is there. For an array, "-" is the position past the end.
func child(c *container, tok string) (int, bool, error) {
	if c.obj {
		i, ok := rank(c.root, []byte(tok))
		return i, ok, nil
	}
	n := count(c.root)
	if tok == "-" {
		return n, false, nil
	}
	if !isIndex(tok) {
		return 0, false, fmt.Errorf("%w: %q is not an array index", errPatchInvalid, tok)
	}
	i, _ := strconv.Atoi(tok)
	if i > n {
		return 0, false, fmt.Errorf("%w: index %d out of range (length %d)", errPathMissing, i, n)
	}
	return i, i < n, nil
}

// locate walks to the parent of the value at toks (not empty) and returns
// the containers from the root to it, and the position of the value in
// it and whether it is there.
func (p *patcher) locate(toks []string) (chain []*container, i int, found bool, err error) {
	chain = p.chain[:0]
	defer func() { p.chain = chain }()
	v := p.root
	for k, tok := range toks {
		c := p.open(v)
		if c == nil {
			return nil, 0, false, fmt.Errorf("%w: %q is inside a scalar", errPathMissing, tok)
		}
		chain = append(chain, c)
		if i, found, err = child(c, tok); err != nil || k == len(toks)-1 {
			return chain, i, found, err
		}
		if !found {
			return nil, 0, false, fmt.Errorf("%w: no member %q", errPathMissing, tok)
		}
		v = p.single(c, i).val
	}
	return chain, i, found, nil
}

// get returns the value at toks.
func (p *patcher) get(toks []string) (*value, error) {
	if len(toks) == 0 {
		return p.root, nil
	}
	chain, i, found, err := p.locate(toks)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("%w: no member %q", errPathMissing, toks[len(toks)-1])
	}
	return p.single(chain[len(chain)-1], i).val, nil
}

// grow adds delta bytes to every container of chain and checks the
// document's size.
func (p *patcher) grow(chain []*container, delta int) error {
	if n := p.root.size() + delta; n > p.limit {
		return fmt.Errorf("%w: %d bytes", errCopyTooLarge, n)
	}
	for _, c := range chain {
		c.size += delta
	}
	return nil
}

// add implements RFC 6902 add, and replace when replace is set.
func (p *patcher) add(toks []string, v *value, replace bool) error {
	if len(toks) == 0 {
		if v.size() > p.limit {
			return fmt.Errorf("%w: %d bytes", errCopyTooLarge, v.size())
		}
		p.root = v
		return nil
	}
	chain, i, found, err := p.locate(toks)
	if err != nil {
		return err
	}
	c, tok := chain[len(chain)-1], toks[len(toks)-1]
	switch {
	case found && (c.obj || replace):
		m := p.single(c, i)
		if err := p.grow(chain, v.size()-m.val.size()); err != nil {
			return err
		}
		m.val = v
		return nil
	case replace:
		return fmt.Errorf("%w: nothing to replace", errPathMissing)
	}
	delta := itemSize(tok, c.obj, v)
	if c.root != nil {
		delta++ // a comma
	}
	if err := p.grow(chain, delta); err != nil {
		return err
	}
	a, b := p.split(c.root, i)
	m := alloc(&p.pieces, piece{val: v, pri: rand.Uint32(), n: 1})
	if c.obj {
		m.key = tok
	}
	c.root = merge(merge(a, m), b)
	return nil
}

// remove implements RFC 6902 remove and returns the value removed.
func (p *patcher) remove(toks []string) (*value, error) {
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: cannot remove the root", errPatchInvalid)
	}
	chain, i, found, err := p.locate(toks)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("%w: nothing to remove", errPathMissing)
	}
	c := chain[len(chain)-1]
	m := p.single(c, i)
	delta := itemSize(m.key, c.obj, m.val)
	if count(c.root) > 1 {
		delta++ // a comma
	}
	_ = p.grow(chain, -delta)
	a, b := p.split(c.root, i)
	_, b = p.split(b, 1)
	c.root = merge(a, b)
	return m.val, nil
}

// apply runs one operation.
func (p *patcher) apply(op *patchOp) error {
	switch op.Op {
	case "add", "replace":
		return p.add(op.path, alloc(&p.values, value{raw: op.Value, at: -1}), op.Op == "replace")
	case "remove":
		_, err := p.remove(op.path)
		return err
	case "test":
		v, err := p.get(op.path)
		if err != nil {
			return err
		}
		if v.size() != len(op.Value) || !bytes.Equal(p.write(nil, v), op.Value) {
			return errTestFailed
		}
		return nil
	}
	v, err := p.get(op.from)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if op.Op == "copy" { // a value of its own: bytes are shared, values are not
		if v.c != nil {
			return p.add(op.path, &value{raw: p.write(nil, v), at: -1}, false)
		}
		return p.add(op.path, alloc(&p.values, value{raw: v.raw, at: v.at}), false)
	}
	if isPrefix(op.from, op.path) {
		if len(op.from) == len(op.path) {
			return nil
		}
		return fmt.Errorf("%w: cannot move a value into its own child", errPatchInvalid)
	}
	if v, err = p.remove(op.from); err != nil {
		return err
	}
	return p.add(op.path, v, false)
}

func isPrefix(a, b []string) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// write appends the canonical form of v.
func (p *patcher) write(dst []byte, v *value) []byte {
	if v.c == nil {
		return append(dst, v.raw...)
	}
	c := v.c
	open, closing := byte('['), byte(']')
	if c.obj {
		open, closing = '{', '}'
	}
	dst = append(dst, open)
	first := true
	var each func(t *piece)
	each = func(t *piece) {
		if t == nil {
			return
		}
		each(t.l)
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if t.src != nil {
			s, _ := t.item(0)
			_, e := t.item(t.own() - 1)
			dst = append(dst, t.src.src[s:e]...)
		} else {
			if c.obj {
				dst = append(jcs.AppendString(dst, t.key), ':')
			}
			dst = p.write(dst, t.val)
		}
		each(t.r)
	}
	each(c.root)
	return append(dst, closing)
}
