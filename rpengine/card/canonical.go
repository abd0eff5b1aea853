package card

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// AppendCanonical appends the RFC 8785 (JCS) canonical form of the JSON
// document src to dst and returns the extended buffer. It accepts any JSON
// value at the root and rejects what RFC 8785 rejects (duplicate keys,
// invalid UTF-8, lone surrogates, numbers beyond the IEEE-754 double range)
// with a *[ParseError]. src is not modified or retained.
func AppendCanonical(dst, src []byte) ([]byte, error) {
	c := getCanon(src)
	defer putCanon(c)
	if err := c.run(); err != nil {
		return dst, err
	}
	return c.appendTo(dst), nil
}

// canon is a two-pass canonicalizer that builds no tree of values.
//
// The first pass (run) parses src into its canonical tokens, with every
// object's members in source order. Where those are the source's bytes
// (compact JSON: everything but white space, \u and \/ escapes and numbers
// that print differently), nothing is copied: the pass keeps a pending
// run of source bytes and copies it to out only where the output departs
// from the source, so a compact card is not copied at all. An object
// whose keys are not in order gets its members sorted by their unescaped
// keys in UTF-16 code unit order (RFC 8785 section 3.2.3), as offsets: no
// bytes move. The second pass (appendTo) copies the output once, taking
// the members of each such object in sorted order. Reordering in place at
// each object, as an earlier version did, copied a member once per
// enclosing object that was out of order.
type canon struct {
	src     []byte
	pos     int
	pend    int        // src[pend:pos] is output not yet copied to out
	out     []byte     // the first pass output before pend
	res     []byte     // the first pass output once run returns: out, or src itself
	frames  []frame    // the containers being parsed
	members []member   // the members of the objects being parsed
	sorted  []piece    // the members of reordered objects, in key order
	recs    []objRec   // objects in document order (see objRec)
	keys    []byte     // unescaped keys that had escapes in the source
	scratch []member   // reorder scratch
	ops     []gatherOp // the second pass's copies (appendTo)
	leafOps []gatherOp // the copies of reordered objects with none inside (see objRec)
	unsafe  bool       // a number that the engine may print differently was seen
	valid8  bool       // src is valid UTF-8 (strings need no check of their own)
	moved   bool       // some object's members were reordered
	err     *ParseError
	buf     []byte // second pass scratch for callers that only hash

	check   bool        // check the Character Card V2 rules (see check.go)
	invalid bool        // a rule is broken
	strArr  bool        // the array last closed holds only strings
	shape   *orderEntry // the key order cache entry of the object last reordered, or nil

	orders     orderCache
	last       [predictDepth]shapeRef // the shape of the object last closed at each depth
	stopUnsafe bool                   // fail at the first hash-unsafe number
	slow       bool                   // no predictedObject (tests compare the two ways)
	wholeOps   []gatherOp             // predictedObject's scratch
	inner      [maxInner]innerRec     // predictedObject's scratch
	predicted  int                    // objects predictedObject took (tests see that it does)
	unsafeLit  string                 // that number
}

// frame is a container being parsed. For an object, base is the index of
// its first member in members, rec the index of its record, and cur the
// member being parsed (noMember between members); for an array, index is
// the element being parsed and strs whether all so far are strings.
type frame struct {
	obj   bool
	strs  bool
	level uint8 // the card rules that apply (check.go)
	pred  shapeRef
	base  int
	rec   int
	cur   int
	index int
}

// A shapeRef names an entry of the key order cache as it was: entry
// (index+1, 0 for none) while it has generation gen.
type shapeRef struct {
	entry uint8
	gen   uint32
}

// predictDepth bounds the depths at which an object is expected to have
// the shape of the object closed before it at the same depth (the next
// lorebook entry, at depth 5).
const predictDepth = 16

const noMember = -1

// member is one object member, output[start:end] as "key":value, its
// value starting at output[vs] with kind (see kindOf). Its unescaped key
// is src[ka:kb], or keys[ka:kb] when the source had escapes. rec is the
// index in recs of the first object inside it. Offsets, not slices: a
// pointer-free struct needs no GC write barriers while members are sorted.
type member struct {
	start, end int
	vs         int
	ka, kb     int
	rec        int
	kw         uint64 // the key's first 8 bytes, zero padded (see keyWord)
	esc        bool
	strs       bool // the value is an array of strings only
	kind       byte
}

// keyWord returns the first 8 bytes of key, little endian, zero padded:
// two keys whose words differ differ in their first 8 bytes, and for
// keys of ASCII (no byte >= 0x80 in either word) the byte-reversed words
// order as the keys do (a zero pads a shorter key, and no byte is below
// zero). Words compare keys without a call, the order cache and the
// sort of an object's members compare keys mostly that way.
func keyWord(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.LittleEndian.Uint64(key)
	}
	var w uint64
	for i, b := range key {
		w |= uint64(b) << (8 * i)
	}
	return w
}

// compareKeys orders the keys of a and b as compareUTF16 does.
func (c *canon) compareKeys(a, b *member) int {
	x, y := a.kw, b.kw
	if x != y && (x|y)&0x8080808080808080 == 0 {
		if bits.ReverseBytes64(x) < bits.ReverseBytes64(y) {
			return -1
		}
		return 1
	}
	return compareUTF16(c.key(a), c.key(b))
}

// piece is a member of a reordered object, as the second pass needs it.
type piece struct{ start, end, rec int }

// objRec is an object that holds reordered members, or is one: its
// members are output[start:end] and its sorted members sorted[m0:m1] (m1
// == 0 when the object itself is in order); recs[i+1:next] are the objects
// inside it. Records are made when an object opens, so recs is in
// document order; an object in order with no reordered object inside
// gives its record back when it closes. A reordered object with no record
// inside (a lorebook entry) has its members' copies made at its close,
// leafOps[m0:m1], instead of pieces.
type objRec struct {
	start, end int
	m0, m1     int
	next       int
	leaf       bool
}

func (c *canon) key(m *member) []byte {
	if m.esc {
		return c.keys[m.ka:m.kb]
	}
	return c.src[m.ka:m.kb]
}

// flush copies the pending source bytes before i to out; the caller then
// writes what replaces src[i:] up to the new pend.
func (c *canon) flush(i int) {
	c.out = append(c.out, c.src[c.pend:i]...)
	c.pend = i
}

// output returns output[s:e] during the first pass.
func (c *canon) output(s, e int) []byte {
	if e > len(c.out) {
		if s >= len(c.out) {
			d := c.pend - len(c.out)
			return c.src[s+d : e+d]
		}
		c.flush(c.pos)
	}
	return c.out[s:e]
}

// run is the first pass.
func (c *canon) run() error {
	c.valid8 = validUTF8(c.src)
	if !c.parse() {
		return c.err
	}
	if len(c.out) == 0 && c.pend == 0 {
		c.res = c.src // the source is its own canonical form, up to member order
		return nil
	}
	c.flush(c.pos)
	c.res = c.out
	return nil
}

// same reports whether the first pass output is src itself.
func (c *canon) same() bool { return len(c.res) > 0 && &c.res[0] == &c.src[0] }

// appendTo is the second pass: it appends the canonical form to dst.
func (c *canon) appendTo(dst []byte) []byte {
	if !c.moved {
		return append(dst, c.res...)
	}
	c.ops, _ = c.gather(c.ops[:0], 0, len(c.res), 0)
	return appendGathered(dst, c.res, c.ops)
}

// gatherOp is a copy of the second pass: src[s&^opComma:e] after a comma
// when s has opComma. The canonical form of a first pass output with
// reordered members is the output of its copies, a permutation of it;
// a card whose source is canonical up to member order keeps its copies
// instead of the canonical bytes (see cardBytes).
type gatherOp struct{ s, e uint32 }

const opComma = 1 << 31 // MaxSize is far below

// gather appends the copies that build the canonical form of res[s:e],
// taking the members of the reordered objects recs[ri:] in it in key
// order, and returns the index of the first record after e.
func (c *canon) gather(ops []gatherOp, s, e, ri int) ([]gatherOp, int) {
	for ri < len(c.recs) && c.recs[ri].start < e {
		r := &c.recs[ri]
		if r.m1 == 0 {
			ri++ // in order: the objects inside it follow
			continue
		}
		ops = append(ops, gatherOp{uint32(s), uint32(r.start)})
		if r.leaf {
			ops = append(ops, c.leafOps[r.m0:r.m1]...)
			s, ri = r.end, r.next
			continue
		}
		for i, m := range c.sorted[r.m0:r.m1] {
			comma := uint32(0)
			if i > 0 {
				comma = opComma
			}
			if m.rec < r.next && c.recs[m.rec].start < m.end {
				ops = append(ops, gatherOp{comma | uint32(m.start), uint32(m.start)})
				ops, _ = c.gather(ops, m.start, m.end, m.rec)
			} else {
				ops = append(ops, gatherOp{comma | uint32(m.start), uint32(m.end)})
			}
		}
		s, ri = r.end, r.next
	}
	return append(ops, gatherOp{uint32(s), uint32(e)}), ri
}

// appendGathered appends the output of the copies ops from src, which is
// len(src) bytes: they permute it. The copies are made in assembly where
// there is (scan_amd64.s): most are a member of a lorebook entry, a few
// dozen bytes, which a call to memmove each made cost more than the
// bytes.
func appendGathered(dst, src []byte, ops []gatherOp) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(src))[:n+len(src)]
	gather(dst[n:], src, ops)
	return dst
}

// gatherGeneric is gather in Go.
func gatherGeneric(out, src []byte, ops []gatherOp) {
	n := 0
	for _, op := range ops {
		s := op.s &^ opComma
		if op.s != s {
			out[n] = ','
			n++
		}
		n += copy(out[n:], src[s:op.e])
	}
}

// pointer renders the parser's position as an RFC 6901 JSON Pointer.
func (c *canon) pointer() string {
	var b strings.Builder
	for _, f := range c.frames {
		switch {
		case !f.obj:
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(f.index))
		case f.cur != noMember:
			b.WriteByte('/')
			b.WriteString(escapeToken(string(c.key(&c.members[f.cur]))))
		}
	}
	return b.String()
}

func (c *canon) fail(msg string) bool {
	if c.err == nil {
		c.err = &ParseError{Pointer: c.pointer(), Offset: c.pos, Msg: msg}
	}
	return false
}

var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipSpaces skips the white space at c.pos, which the output drops.
func (c *canon) skipSpaces() {
	c.flush(c.pos)
	for c.pos < len(c.src) && space[c.src[c.pos]] {
		c.pos++
	}
	c.pend = c.pos
}

// parse is the first pass proper: a loop over values with an explicit
// stack of containers, so that the position stays in a register instead
// of being passed through a call per value. It is long because it is the
// JSON grammar as a state machine; the rare cases (strings that need
// rewriting, numbers that are not short integers, errors) are calls.
// delta is c.pend - len(c.out), so that the output offset of pos is
// pos - delta.
func (c *canon) parse() bool {
	src := c.src
	pos, delta := 0, 0
	level := lvNone
	if c.check {
		level = lvRoot
	}
	var f *frame // the innermost container, nil at the root
	var b byte
	// In a document that is valid UTF-8, strings end at their first
	// special byte that is not non-ASCII (scan.go).
	scan, highs := scanString, uint64(0x8080808080808080)
	if c.valid8 {
		scan, highs = scanValidString, 0
	}
	// Before a method that works on the fields, c.pos = pos hands the
	// position over; after it, pos and delta are taken back.

value:
	if pos >= len(src) {
		c.pos = pos
		return c.fail("unexpected end of input")
	}
	switch b = src[pos]; {
	case b == '"':
		if end, _, ok := scan(src, pos); ok {
			pos = end
		} else {
			c.pos = pos
			if _, ok := c.str(); !ok {
				return false
			}
			pos, delta = c.pos, c.pend-len(c.out)
		}
	case b == '{':
		if len(c.frames) == maxDepth {
			c.pos = pos
			return c.fail("nesting deeper than " + strconv.Itoa(maxDepth))
		}
		pos++
		if pos < len(src) && space[src[pos]] {
			c.pos = pos
			c.skipSpaces()
			pos, delta = c.pos, c.pend-len(c.out)
		}
		if pos < len(src) && src[pos] == '}' {
			pos++
			if level != lvNone {
				c.shape = nil
				c.checkObject(level, nil)
			}
			break
		}
		d := len(c.frames)
		if d < predictDepth && c.last[d].entry != 0 && (level == lvNone || level == lvEntry) && !c.slow {
			if end := c.predictedObject(pos, delta, level); end > 0 {
				pos = end
				break
			}
		}
		f = c.pushFrame()
		f.obj, f.level, f.base, f.rec, f.cur = true, level, len(c.members), len(c.recs), noMember
		if d < predictDepth {
			f.pred = c.last[d]
		}
		n := len(c.recs)
		if n == cap(c.recs) {
			c.recs = slices.Grow(c.recs, 1)
		}
		c.recs = c.recs[:n+1]
		c.recs[n] = objRec{}
		c.recs[n].start = pos - delta
		goto key
	case b == '[':
		if len(c.frames) == maxDepth {
			c.pos = pos
			return c.fail("nesting deeper than " + strconv.Itoa(maxDepth))
		}
		pos++
		if pos < len(src) && space[src[pos]] {
			c.pos = pos
			c.skipSpaces()
			pos, delta = c.pos, c.pend-len(c.out)
		}
		if pos < len(src) && src[pos] == ']' {
			pos++
			c.strArr = true
			break
		}
		f = c.pushFrame()
		f.strs, f.level = true, elementLevel(level)
		goto element
	case b == '-' || (b >= '0' && b <= '9'):
		if end := shortInt(src, pos); end > 0 {
			pos = end // canonical as it is
		} else {
			c.pos = pos
			if !c.number() {
				return false
			}
			pos, delta = c.pos, c.pend-len(c.out)
		}
	case b == 't' && len(src)-pos >= 4 && string(src[pos:pos+4]) == "true":
		pos += 4
	case b == 'f' && len(src)-pos >= 5 && string(src[pos:pos+5]) == "false":
		pos += 5
	case b == 'n' && len(src)-pos >= 4 && string(src[pos:pos+4]) == "null":
		pos += 4
	case b == 't', b == 'f', b == 'n':
		c.pos = pos
		return c.fail("invalid literal, expected " + literalOf(b))
	case space[b]:
		c.pos = pos
		c.skipSpaces()
		pos, delta = c.pos, c.pend-len(c.out)
		goto value
	default:
		c.pos = pos
		return c.fail("invalid character " + strconv.QuoteRune(rune(b)) + " looking for a value")
	}

next: // after a value
	if f == nil {
		if pos < len(src) && space[src[pos]] {
			c.pos = pos
			c.skipSpaces()
			pos, delta = c.pos, c.pend-len(c.out)
		}
		c.pos = pos
		if pos != len(src) {
			return c.fail("unexpected data after the JSON value")
		}
		return true
	}
	if f.obj {
		m := &c.members[len(c.members)-1]
		m.end = pos - delta
		if m.kind == '[' {
			m.strs = c.strArr
		}
	}
ws:
	if pos >= len(src) {
		c.pos = pos
		if f.obj {
			return c.fail("unexpected end of input in object")
		}
		return c.fail("unexpected end of input in array")
	}
	switch b = src[pos]; {
	case b == ',':
		pos++
		if f.obj {
			f.cur = noMember
			goto key
		}
		f.index++
		goto element
	case b == '}' && f.obj:
		pos++
		c.pos = pos
		if !c.closeObject(f, pos-delta-1) {
			return false
		}
	case b == ']' && !f.obj:
		pos++
		c.strArr = f.strs
	case space[b]:
		c.pos = pos
		c.skipSpaces()
		pos, delta = c.pos, c.pend-len(c.out)
		goto ws
	case f.obj:
		c.pos = pos
		return c.fail("expected ',' or '}' in object")
	default:
		c.pos = pos
		return c.fail("expected ',' or ']' in array")
	}
	c.frames = c.frames[:len(c.frames)-1]
	f = nil
	if n := len(c.frames); n > 0 {
		f = &c.frames[n-1]
	}
	goto next

element: // an array element at pos
	if pos < len(src) && space[src[pos]] {
		c.pos = pos
		c.skipSpaces()
		pos, delta = c.pos, c.pend-len(c.out)
	}
	if pos >= len(src) {
		c.pos = pos
		return c.fail("unexpected end of input")
	}
	b = src[pos]
	f.strs = f.strs && b == '"'
	level = f.level
	if level != lvNone && b != '{' {
		c.invalid = true // an entry must be an object
	}
	goto value

key: // an object member's key at pos
	if pos >= len(src) || src[pos] != '"' {
		if pos < len(src) && space[src[pos]] {
			c.pos = pos
			c.skipSpaces()
			pos, delta = c.pos, c.pend-len(c.out)
			goto key
		}
		c.pos = pos
		return c.fail("expected a string key in object")
	}
	if f.pred.entry != 0 && (f.level == lvNone || f.level == lvEntry) {
		var atKey bool
		if pos, atKey = c.predictedMembers(f, pos, delta); !atKey {
			goto ws
		}
	}
	{
		n := len(c.members)
		if n == cap(c.members) {
			c.members = slices.Grow(c.members, 1)
		}
		c.members = c.members[:n+1]
		m := &c.members[n]
		*m = member{start: pos - delta, ka: pos + 1}
		// A member of an object of the shape of the one closed before it
		// at this depth (the next lorebook entry) has that shape's key at
		// its index, usually: compare the bytes, "key": included.
		if f.pred.entry != 0 {
			e := &c.orders.e[f.pred.entry-1]
			if i := n - f.base; e.gen == f.pred.gen && i < len(e.quoted) {
				k := &e.quoted[i]
				var ok bool
				if k.n <= 24 && pos+24 <= len(src) { // three loads, masks and compares
					w := src[pos : pos+24 : pos+24]
					ok = binary.LittleEndian.Uint64(w)&k.m[0] == k.w[0] && binary.LittleEndian.Uint64(w[8:])&k.m[1] == k.w[1] &&
						binary.LittleEndian.Uint64(w[16:])&k.m[2] == k.w[2]
				} else {
					ok = k.at(src, pos, e.qbytes)
				}
				if ok {
					m.kb, m.kw = pos+k.n-2, k.word
					pos += k.n
					f.cur = n
					goto colon
				}
			}
			f.pred.entry = 0
		}
		// Most keys are short and plain: their closing quote is the first
		// byte of the next 16 that needs a look.
		if i := pos + 1; i+16 <= len(src) {
			w := src[i : i+16 : i+16]
			w0, w1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
			if m0 := quoteMask(w0) | w0&highs; m0 != 0 {
				n := bits.TrailingZeros64(m0) >> 3
				i += n
				m.kw = w0 & (1<<(8*n) - 1)
			} else if m1 := quoteMask(w1) | w1&highs; m1 != 0 {
				i += 8 + bits.TrailingZeros64(m1)>>3
				m.kw = w0
			}
			if src[i] == '"' {
				m.kb, pos = i, i+1
			}
		}
		if m.kb == 0 {
			end, esc, ok := scan(src, pos)
			if !ok {
				c.pos = pos
				if esc, ok = c.str(); !ok {
					return false
				}
				pos, delta = c.pos, c.pend-len(c.out)
				end = pos
			}
			m.kb, pos = end-1, end
			if esc {
				n := len(c.keys)
				c.keys = appendUnescaped(c.keys, src[m.ka:m.kb])
				m.ka, m.kb, m.esc = n, len(c.keys), true
			}
			m.kw = keyWord(c.key(m))
		}
		f.cur = n
		if pos < len(src) && src[pos] == ':' {
			pos++
		} else {
			if pos < len(src) && space[src[pos]] {
				c.pos = pos
				c.skipSpaces()
				pos, delta = c.pos, c.pend-len(c.out)
			}
			if pos >= len(src) || src[pos] != ':' {
				c.pos = pos
				return c.fail("expected ':' after object key")
			}
			pos++
		}
	colon:
		if pos < len(src) && space[src[pos]] {
			c.pos = pos
			c.skipSpaces()
			pos, delta = c.pos, c.pend-len(c.out)
		}
		if pos < len(src) {
			m.kind = kindOf(src[pos])
		}
		m.vs, m.rec = pos-delta, len(c.recs)
		level = lvNone
		if f.level != lvNone && f.level < lvEntries { // an entry's members have no rules of their own
			level = memberLevel(f.level, c.key(m))
		}
		// Most values are scalars already canonical: taken here, they
		// skip the dispatch of value, next and ws.
		if pos < len(src) {
			switch b = src[pos]; {
			case b == '"':
				if end, _, ok := scan(src, pos); ok {
					pos = end
					goto scalar
				}
			case b == '-' || (b >= '0' && b <= '9'):
				if end := shortInt(src, pos); end > 0 {
					pos = end
					goto scalar
				}
			case b == 't' && len(src)-pos >= 4 && string(src[pos:pos+4]) == "true",
				b == 'n' && len(src)-pos >= 4 && string(src[pos:pos+4]) == "null":
				pos += 4
				goto scalar
			case b == 'f' && len(src)-pos >= 5 && string(src[pos:pos+5]) == "false":
				pos += 5
				goto scalar
			}
		}
	}
	goto value

scalar: // a member's scalar value ends at pos
	c.members[len(c.members)-1].end = pos - delta
	if pos+1 < len(src) && src[pos] == ',' && src[pos+1] == '"' {
		pos++
		f.cur = noMember
		goto key
	}
	goto ws
}

// pushFrame appends a zero frame and returns it, for its fields to be
// written in place: a frame (or a record) built on the stack and then
// appended was copied with 16-byte loads of what had just been stored a
// byte or a word at a time, which the store buffer does not forward: a
// stall at each container.
func (c *canon) pushFrame() *frame {
	n := len(c.frames)
	if n == cap(c.frames) {
		c.frames = slices.Grow(c.frames, 1)
	}
	c.frames = c.frames[:n+1]
	f := &c.frames[n]
	*f = frame{}
	return f
}

// predictedMembers takes the members at src[pos:] (a key's quote) of the
// object of frame f, which is expected to have the shape f.pred, while
// each is "key": as predicted and a value that is its own canonical form
// and holds no container (a string, short integer, literal or []): most
// of a lorebook entry, 11 of its 14 members. Out of parse, whose many
// live values its calls spill and reload, such a member costs less. It
// stops before anything else, parse taking it on as it did before, and
// reports whether it stopped at a key (pos at its quote, after a comma)
// or after a value (pos past it, f.cur naming its member). Nothing is
// flushed here: delta is parse's throughout. f is not at a level whose
// members have rules of their own (memberLevel).
func (c *canon) predictedMembers(f *frame, pos, delta int) (int, bool) {
	src := c.src
	e := &c.orders.e[f.pred.entry-1]
	if e.gen != f.pred.gen {
		return pos, true
	}
	quoted := e.quoted
	for {
		n := len(c.members)
		i := n - f.base
		if i >= len(quoted) || pos+24 > len(src) {
			return pos, true
		}
		k := &quoted[i]
		w := src[pos : pos+24 : pos+24]
		if k.n > 24 || binary.LittleEndian.Uint64(w)&k.m[0] != k.w[0] || binary.LittleEndian.Uint64(w[8:])&k.m[1] != k.w[1] ||
			binary.LittleEndian.Uint64(w[16:])&k.m[2] != k.w[2] {
			return pos, true
		}
		v := pos + k.n
		if v >= len(src) {
			return pos, true
		}
		end, strs := 0, false
		switch b := src[v]; {
		case b == '"':
			var ok bool
			if c.valid8 {
				end, _, ok = scanValidString(src, v)
			} else {
				end, _, ok = scanString(src, v)
			}
			if !ok {
				return pos, true
			}
		case b >= '0' && b <= '9' && v+2 < len(src) && (src[v+1] == ',' || src[v+1] == '}'):
			end = v + 1 // one digit (an index, a priority), without a call
		case b >= '1' && b <= '9' && v+2 < len(src) && src[v+1] >= '0' && src[v+1] <= '9' && (src[v+2] == ',' || src[v+2] == '}'):
			end = v + 2 // two
		case b == '-' || (b >= '0' && b <= '9'):
			if end = shortInt(src, v); end == 0 {
				return pos, true
			}
		case b == 't' && len(src)-v >= 4 && string(src[v:v+4]) == "true",
			b == 'n' && len(src)-v >= 4 && string(src[v:v+4]) == "null":
			end = v + 4
		case b == 'f' && len(src)-v >= 5 && string(src[v:v+5]) == "false":
			end = v + 5
		case b == '[' && v+1 < len(src) && src[v+1] == ']':
			end, strs = v+2, true // as parse takes an empty array
			c.strArr = true
		default:
			return pos, true
		}
		if n == cap(c.members) {
			c.members = slices.Grow(c.members, 1)
		}
		c.members = c.members[:n+1]
		m := &c.members[n]
		*m = member{} // then each field in place (see pushFrame)
		m.start, m.end, m.vs, m.ka, m.kb, m.rec = pos-delta, end-delta, v-delta, pos+1, v-2, len(c.recs)
		m.kw, m.strs, m.kind = k.word, strs, kindOf(src[v])
		if end+1 < len(src) && src[end] == ',' && src[end+1] == '"' {
			pos = end + 1
			continue
		}
		f.cur = n
		return end, false
	}
}

// predictedObject takes the object whose first key is at src[pos] whole,
// when it has the shape c.last[d] predicts (d the object's depth: the
// next lorebook entry), in that shape's key order, compact, and every
// value its own canonical form: a scalar, an array of strings or an
// object of scalars whose keys are in order (an entry's keys, secondary
// keys and extensions) or, out of order, of the shape its parse would
// predict (takeInner: an exporter's extensions). It returns the position past its '}', or 0 at
// the first thing that does not fit, having changed nothing: parse then
// takes the object member by member, errors and all. Such an object
// needs no frame, members or sort: its members' copies go straight to
// where the shape's order puts them, and its card rules (level) are
// those the shape has at that level, checked against its values. Per
// entry, that was about half of the first pass's work outside strings.
func (c *canon) predictedObject(pos, delta int, level uint8) int {
	d := len(c.frames)
	p := c.last[d]
	e := &c.orders.e[p.entry-1]
	np := len(e.quoted)
	if e.gen != p.gen || !e.predict || len(e.perm) != np || d+1 >= maxDepth || e.misses >= maxWholeMisses {
		return 0
	}
	// The rules that ask only for a kind are checked as each value is
	// taken: want is the kind each member must have (0: any).
	want, sc := &anyKind, (*shapeChecks)(nil)
	if level != lvNone && !c.invalid {
		sc = e.checksAt(level)
		want = &sc.want
	}
	src, valid8 := c.src, c.valid8
	start := pos
	n := len(c.leafOps)
	if cap(c.leafOps)-n < np {
		c.leafOps = slices.Grow(c.leafOps, np)
	}
	ops := c.leafOps[n : n+np]
	quoted := e.quoted[:np] // locals, not reloaded after each store to ops
	var strs uint64         // the members whose values are arrays of strings
	var flags uint8         // predictedBad, predictedObj
	// The objects inside it out of order (c.inner[:ni]) have their
	// copies in c.wholeOps until the object is taken.
	ni := 0
	c.wholeOps = c.wholeOps[:0]
	e.misses++ // back if this is not an object of the shape: until it is taken
	for i := range quoted {
		if i > 0 {
			if pos >= len(src) || src[pos] != ',' {
				return 0
			}
			pos++
		}
		k := &quoted[i]
		if k.n <= 24 && pos+24 <= len(src) {
			w := src[pos : pos+24 : pos+24]
			if binary.LittleEndian.Uint64(w)&k.m[0] != k.w[0] || binary.LittleEndian.Uint64(w[8:])&k.m[1] != k.w[1] ||
				binary.LittleEndian.Uint64(w[16:])&k.m[2] != k.w[2] {
				if i == 0 {
					e.misses--
				}
				return 0
			}
		} else if !k.at(src, pos, e.qbytes) {
			if i == 0 {
				e.misses--
			}
			return 0
		}
		v := pos + k.n
		if v+17 >= len(src) { // room for a value, '}' and the words read below
			return 0
		}
		end := 0
		switch b := src[v]; {
		case b == '"':
			// A string of up to 15 bytes ends in the two words after its
			// quote, found here without a call when the document is valid
			// UTF-8 (as scanValidString starts).
			if valid8 {
				w := src[v+1 : v+17 : v+17]
				if m := quoteMask(binary.LittleEndian.Uint64(w)); m != 0 {
					if j := v + 1 + bits.TrailingZeros64(m)>>3; src[j] == '"' {
						end = j + 1
						break
					}
				} else if m := quoteMask(binary.LittleEndian.Uint64(w[8:])); m != 0 {
					if j := v + 9 + bits.TrailingZeros64(m)>>3; src[j] == '"' {
						end = j + 1
						break
					}
				}
			}
			var ok bool
			if valid8 {
				end, _, ok = scanValidString(src, v)
			} else {
				end, _, ok = scanString(src, v)
			}
			if !ok {
				return 0
			}
		case b >= '0' && b <= '9' && (src[v+1] == ',' || src[v+1] == '}'):
			end = v + 1
		case b >= '1' && b <= '9' && src[v+1] >= '0' && src[v+1] <= '9' && (src[v+2] == ',' || src[v+2] == '}'):
			end = v + 2
		case b == 't' && binary.LittleEndian.Uint32(src[v:]) == trueWord:
			end = v + 4
		case b == 'f' && binary.LittleEndian.Uint32(src[v+1:]) == alseWord:
			end = v + 5
		case b == '[':
			if end = plainStrings(src, v, valid8); end == 0 {
				return 0
			}
			strs |= 1 << (i & 63) // i is below maxOrderKeys
		case b == '{':
			if end = plainObject(src, v, valid8); end != 0 {
				if end > v+2 {
					flags = flags&^predictedInner | predictedObj
				}
				break
			}
			if end = c.takeInner(v, delta, d+1, ni, flags); end == 0 {
				return 0
			}
			ni++
			flags |= predictedObj | predictedInner
		default:
			if end = plainScalar(src, v, valid8); end == 0 {
				return 0
			}
		}
		if w := want[i&63]; w != 0 && kinds[src[v]] != w {
			flags |= predictedBad
		}
		ops[k.sorted] = gatherOp{opComma | uint32(pos-delta), uint32(end - delta)}
		pos = end
	}
	if pos >= len(src) || src[pos] != '}' {
		return 0
	}
	if sc != nil && (flags&predictedBad != 0 || !sc.required || strs&sc.strs != sc.strs || !c.checkPredicted(e, sc, level, ops, delta)) {
		c.invalid = true
	}
	// As closeObject would have left things: the copies and the record
	// of a reordered object with none inside, or its pieces and records
	// and those of the objects inside, and the shapes last closed at
	// this depth and (an object of the entry) the next.
	r := len(c.recs)
	if cap(c.recs)-r < 1+ni {
		c.recs = slices.Grow(c.recs, 1+ni)
	}
	c.recs = c.recs[:r+1+ni]
	rec := &c.recs[r]
	*rec = objRec{} // then each field in place (see pushFrame)
	if ni == 0 {
		ops[0].s &^= opComma
		c.leafOps = c.leafOps[:n+np]
		rec.start, rec.end, rec.m0, rec.m1, rec.next, rec.leaf = start-delta, pos-delta, n, n+np, r+1, true
	} else {
		// A member's pieces name the first record at or after its start:
		// the object inside it, or the first after it.
		m0 := len(c.sorted)
		c.sorted = slices.Grow(c.sorted, np)[:m0+np]
		for j, op := range ops {
			s := int(op.s &^ opComma)
			ri := r + 1
			for t := 0; t < ni && c.inner[t].start < s; t++ {
				ri++
			}
			c.sorted[m0+j] = piece{s, int(op.e), ri}
		}
		rec.start, rec.end, rec.m0, rec.m1, rec.next = start-delta, pos-delta, m0, m0+np, r+1+ni
		c.leafOps = c.leafOps[:n] // the copies above were scratch
		for t := range ni {
			in := &c.inner[t]
			l0 := len(c.leafOps)
			c.leafOps = append(c.leafOps, c.wholeOps[in.o0:in.o1]...)
			c.recs[r+1+t] = objRec{start: in.start, end: in.end, m0: l0, m1: len(c.leafOps), next: r + 2 + t, leaf: true}
		}
	}
	c.moved, c.shape, e.misses = true, e, 0
	c.predicted++
	c.last[d] = shapeRef{uint8(e.index + 1), e.gen}
	if flags&predictedObj != 0 && d+1 < predictDepth {
		c.last[d+1] = shapeRef{}
		if flags&predictedInner != 0 {
			c.last[d+1] = c.inner[ni-1].shape
		}
	}
	if strs != 0 {
		c.strArr = true
	}
	return pos + 1
}

// maxInner bounds the objects out of order inside an object that
// predictedObject takes (an entry's extensions, as exporters write them).
const maxInner = 4

// innerRec is such an object: its output from start to end (past its
// '{', at its '}'), its copies wholeOps[o0:o1], its shape.
type innerRec struct {
	start, end, o0, o1 int
	shape              shapeRef
}

// takeInner takes the object at src[v] inside the object predictedObject
// is taking, at depth d, out of order, as c.inner[ni], when it has the
// shape its parse would predict: that of the object closed last at its
// depth, which is the last object inside the one being taken when there
// is one (flags). It returns the position past its '}', or 0.
func (c *canon) takeInner(v, delta, d, ni int, flags uint8) int {
	if ni == maxInner || d >= predictDepth {
		return 0
	}
	p := c.last[d]
	switch {
	case flags&predictedInner != 0:
		p = c.inner[ni-1].shape
	case flags&predictedObj != 0:
		return 0 // an object in order closed last: no prediction
	}
	if p.entry == 0 {
		return 0
	}
	o0 := len(c.wholeOps)
	e := &c.orders.e[p.entry-1]
	end := c.predictedInner(e, p, v, delta)
	if end != 0 {
		c.inner[ni] = innerRec{start: v + 1 - delta, end: end - 1 - delta, o0: o0, o1: len(c.wholeOps), shape: p}
	}
	return end
}

// predictedInner takes the object at src[v] ('{') of the shape p names,
// e, when it is compact, has e's keys in their order and its values are
// plain scalars (plainScalar), appending its members' copies to
// c.wholeOps in e's sorted order. It returns the position past its '}',
// or 0.
func (c *canon) predictedInner(e *orderEntry, p shapeRef, v, delta int) int {
	np := len(e.quoted)
	if e.gen != p.gen || !e.predict || len(e.perm) != np {
		return 0
	}
	src, valid8 := c.src, c.valid8
	base := len(c.wholeOps)
	c.wholeOps = slices.Grow(c.wholeOps, np)[:base+np]
	ops := c.wholeOps[base:]
	pos := v + 1
	for i := range e.quoted {
		if i > 0 {
			if pos >= len(src) || src[pos] != ',' {
				return 0
			}
			pos++
		}
		k := &e.quoted[i]
		if !k.at(src, pos, e.qbytes) {
			return 0
		}
		val := pos + k.n
		if val >= len(src) {
			return 0
		}
		end := plainScalar(src, val, valid8)
		if end == 0 {
			return 0
		}
		ops[k.sorted] = gatherOp{opComma | uint32(pos-delta), uint32(end - delta)}
		pos = end
	}
	if pos >= len(src) || src[pos] != '}' {
		return 0
	}
	ops[0].s &^= opComma
	return pos + 1
}

// maxWholeMisses is how many objects of a shape in a row predictedObject
// may fail to take before it no longer tries that shape: one whose
// values are not plain (an exporter's entry with an extensions object
// out of order) would have each of its objects scanned up to there
// twice.
const maxWholeMisses = 4

// predictedObject's flags: a value of a kind the rules do not allow, and
// of the objects inside:
const (
	predictedBad   = 1 << iota
	predictedObj   // an object with members
	predictedInner // the last such object was out of order
)

// The literals' words, little endian: "true" and the "alse" of "false".
const trueWord, alseWord = 't' | 'r'<<8 | 'u'<<16 | 'e'<<24, 'a' | 'l'<<8 | 's'<<16 | 'e'<<24

// anyKind asks no kind of any member.
var anyKind [maxOrderKeys]byte

// kinds is kindOf as a table.
var kinds = func() (t [256]byte) {
	for b := range t {
		t[b] = kindOf(byte(b))
	}
	return t
}()

// checkPredicted reports whether the members of an object predictedObject
// took, whose copies are ops in e's sorted order, keep the rules of sc
// (e's checks at level) that ask more than a kind.
// Nothing was flushed since the object began: its output is src less delta.
func (c *canon) checkPredicted(e *orderEntry, sc *shapeChecks, level uint8, ops []gatherOp, delta int) bool {
	for _, k := range sc.other {
		q := &e.quoted[k.index]
		op := ops[q.sorted]
		vs := int(op.s&^opComma) + q.n
		m := member{vs: vs, end: int(op.e), kind: kinds[c.src[vs+delta]]}
		if !c.checkMember(&rules[level].rules[k.field], &m) {
			return false
		}
	}
	return true
}

// plainScalar returns the end of the value at src[v] when it is a
// string, short integer or literal that is its own canonical form (as
// parse takes them without a call of their own), or 0.
func plainScalar(src []byte, v int, valid8 bool) int {
	switch b := src[v]; {
	case b == '"':
		end, _ := plainString(src, v, valid8)
		return end
	case b == '-' || (b >= '0' && b <= '9'):
		return shortInt(src, v)
	case b == 't' && len(src)-v >= 4 && string(src[v:v+4]) == "true",
		b == 'n' && len(src)-v >= 4 && string(src[v:v+4]) == "null":
		return v + 4
	case b == 'f' && len(src)-v >= 5 && string(src[v:v+5]) == "false":
		return v + 5
	}
	return 0
}

// plainString returns the end of the string at src[v] when it is its
// own canonical form, or 0, and whether it has escapes. One of up to 15
// bytes ends in the two words after its quote, found without a call
// when the document is valid UTF-8 (as scanValidString starts): the
// strings of an entry's keys array, the keys of its extensions.
func plainString(src []byte, v int, valid8 bool) (int, bool) {
	if valid8 && v+17 <= len(src) {
		w := src[v+1 : v+17 : v+17]
		if m := quoteMask(binary.LittleEndian.Uint64(w)); m != 0 {
			if j := v + 1 + bits.TrailingZeros64(m)>>3; src[j] == '"' {
				return j + 1, false
			}
		} else if m := quoteMask(binary.LittleEndian.Uint64(w[8:])); m != 0 {
			if j := v + 9 + bits.TrailingZeros64(m)>>3; src[j] == '"' {
				return j + 1, false
			}
		}
	}
	var end int
	var esc, ok bool
	if valid8 {
		end, esc, ok = scanValidString(src, v)
	} else {
		end, esc, ok = scanString(src, v)
	}
	if !ok {
		return 0, esc
	}
	return end, esc
}

// plainStrings returns the end of the array at src[v] when it is compact
// and holds only strings that are their own canonical form, or 0.
func plainStrings(src []byte, v int, valid8 bool) int {
	i := v + 1
	if i < len(src) && src[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return 0
		}
		if i, _ = plainString(src, i, valid8); i == 0 || i >= len(src) {
			return 0
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			return i + 1
		default:
			return 0
		}
	}
}

// plainObject returns the end of the object at src[v] when it is compact,
// its keys have no escapes and are in order (no duplicates then) and its
// values are plain scalars (plainScalar), or 0: such an object is its own
// canonical form, which parse would find after sorting nothing.
func plainObject(src []byte, v int, valid8 bool) int {
	i := v + 1
	if i < len(src) && src[i] == '}' {
		return i + 1
	}
	var prev []byte
	for {
		if i >= len(src) || src[i] != '"' {
			return 0
		}
		end, esc := plainString(src, i, valid8)
		if end == 0 || esc || end+1 >= len(src) || src[end] != ':' {
			return 0
		}
		key := src[i+1 : end-1]
		if prev != nil && compareUTF16(prev, key) >= 0 {
			return 0
		}
		prev = key
		if i = plainScalar(src, end+1, valid8); i == 0 || i >= len(src) {
			return 0
		}
		switch src[i] {
		case ',':
			i++
		case '}':
			return i + 1
		default:
			return 0
		}
	}
}

func literalOf(b byte) string {
	switch b {
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}

// closeObject reorders and checks the object of frame f, whose '}' is at
// output offset end.
func (c *canon) closeObject(f *frame, end int) bool {
	if !c.reorder(f, end) {
		return false
	}
	if d := len(c.frames) - 1; d < predictDepth {
		c.last[d] = shapeRef{}
		if e := c.shape; e != nil && e.predict {
			c.last[d] = shapeRef{uint8(e.index + 1), e.gen}
		}
	}
	if f.level != lvNone {
		c.checkObject(f.level, c.members[f.base:])
	}
	c.members = c.members[:f.base]
	return true
}

// reorder sorts the members of the object of frame f by key, rejects
// duplicate keys, and completes or gives back its record. The members stay
// in source order in c.members; the sorted order goes to c.sorted.
func (c *canon) reorder(f *frame, end int) bool {
	ms := c.members[f.base:]
	c.shape = nil
	if p := f.pred; p.entry != 0 {
		// Every key was compared with those of this entry of the cache,
		// which has not changed since: the object has its shape.
		if e := &c.orders.e[p.entry-1]; e.gen == p.gen && len(e.perm) == len(ms) {
			c.placeSorted(f, e, ms, end)
			return true
		}
	}
	sorted := true
	for i := 1; i < len(ms); i++ {
		if c.compareKeys(&ms[i-1], &ms[i]) >= 0 {
			sorted = false
			break
		}
	}
	r := &c.recs[f.rec]
	r.end = end
	if sorted {
		if len(c.recs) == f.rec+1 {
			c.recs = c.recs[:f.rec] // nothing reordered in it
		} else {
			r.next = len(c.recs)
		}
		return true
	}
	if e := c.orders.find(c, ms); e != nil {
		c.placeSorted(f, e, ms, end)
		return true
	}
	r.m0 = len(c.sorted)
	{
		c.scratch = append(c.scratch[:0], ms...)
		o := c.scratch
		c.orders.remember(c, o)
		slices.SortStableFunc(o, func(a, b member) int { return c.compareKeys(&a, &b) })
		for i := 1; i < len(o); i++ {
			if bytes.Equal(c.key(&o[i-1]), c.key(&o[i])) {
				c.orders.forget()
				f.cur = f.base + slices.IndexFunc(ms, func(m member) bool { return m.start == o[i].start })
				return c.fail("duplicate key " + strconv.Quote(string(c.key(&o[i]))))
			}
		}
		// The next object at this depth is expected to have this shape
		// too (closeObject), checked by its rules (checkObject).
		if e := c.orders.cur; e != nil {
			c.orders.learn(o)
			c.shape = e
		}
		for i := range o {
			c.sorted = append(c.sorted, piece{o[i].start, o[i].end, o[i].rec})
		}
	}
	r.m1 = len(c.sorted)
	r.next = len(c.recs)
	c.moved = true
	return true
}

// placeSorted completes the record of the object of frame f, whose
// members ms have the keys of cache entry e, in e's sorted order.
func (c *canon) placeSorted(f *frame, e *orderEntry, ms []member, end int) {
	c.shape = e
	r := &c.recs[f.rec]
	r.end, r.next = end, len(c.recs)
	c.moved = true
	if r.next == f.rec+1 { // no reordered object inside: the copies now
		n := len(c.leafOps)
		c.leafOps = slices.Grow(c.leafOps, len(e.perm))[:n+len(e.perm)]
		ops := c.leafOps[n:]
		for k, j := range e.perm {
			m := &ms[j]
			ops[k] = gatherOp{opComma | uint32(m.start), uint32(m.end)}
		}
		ops[0].s &^= opComma
		r.leaf, r.m0, r.m1 = true, n, len(c.leafOps)
		return
	}
	r.m0 = len(c.sorted)
	for _, j := range e.perm {
		m := &ms[j]
		c.sorted = append(c.sorted, piece{m.start, m.end, m.rec})
	}
	r.m1 = len(c.sorted)
}

// compareUTF16 orders two UTF-8 strings by their UTF-16 code units
// (RFC 8785 section 3.2.3). Byte order equals code point order; the two
// differ only where a character at or above U+10000 (lead byte 0xF0..0xF4,
// a surrogate pair 0xD800.. in UTF-16) meets one in U+E000..U+FFFF (lead
// byte 0xEE or 0xEF): there the supplementary character sorts first.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	x, y := a[i], b[i]
	switch {
	case x >= 0xF0 && (y == 0xEE || y == 0xEF):
		return -1
	case y >= 0xF0 && (x == 0xEE || x == 0xEF):
		return 1
	}
	return int(x) - int(y)
}
