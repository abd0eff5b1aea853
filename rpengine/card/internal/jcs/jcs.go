package jcs

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MaxDepth bounds the nesting of arrays and objects, so that hostile input
// cannot exhaust the stack.
const MaxDepth = 512

// Options adds checks to [Append]. A nil *Options adds none.
type Options struct {
	// Number, if set, is called with the literal of every number, in
	// document order, before it is canonicalized. An error stops Append
	// with a *SyntaxError at the number that wraps it.
	Number func(literal []byte) error
}

// SyntaxError reports input that RFC 8785 refuses, or a number that
// [Options.Number] refused.
type SyntaxError struct {
	Offset  int    // byte offset in the input
	Pointer string // RFC 6901 JSON Pointer of the value at fault ("" is the root)
	Msg     string // what is wrong
	Err     error  // the error of Options.Number, or nil
}

// Error formats the fault with its pointer and offset.
func (e *SyntaxError) Error() string {
	return "jcs: " + e.Msg + " at " + strconv.Quote(e.Pointer) + " (byte " + strconv.Itoa(e.Offset) + ")"
}

// Unwrap returns the error of Options.Number, or nil.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Append appends the canonical form of the JSON text src to dst and
// returns the extended buffer; on error, dst unchanged and a
// *[SyntaxError]. Any JSON value may be the root. src is not modified or
// retained.
func Append(dst, src []byte, opts *Options) ([]byte, error) {
	p := parsers.Get().(*parser)
	defer p.release()
	p.src = src
	if opts != nil {
		p.number = opts.Number
	}
	i := p.value(p.space(0))
	if i >= 0 && p.space(i) != len(src) {
		p.fail(p.space(i), "unexpected data after the JSON value")
	}
	if p.err != nil {
		err := p.err
		return dst, err
	}
	res := src // the first pass's output: src itself when it needed no change
	if p.pend != 0 || len(p.out) != 0 {
		p.flush(len(src))
		res = p.out
	}
	if !p.moved {
		return append(dst, res...), nil
	}
	return p.emit(slices.Grow(dst, len(res)), res, 0, len(res), 0), nil // the second pass
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooled bounds the scratch a pooled parser keeps: 4 MiB of output,
// 64 Ki members or records.
const maxPooled = 1 << 16

// parser is one canonicalization. Its first pass copies nothing where
// the source is its own canonical form: the output is out, then the
// source from pend on (the pending bytes), so that a compact document
// with canonical values is not copied at all. Offsets of the output are
// in that sense.
type parser struct {
	src, out []byte
	pend     int  // src[pend:] follows out in the output
	esc      bool // the string read last had an escape
	number   func([]byte) error
	err      *SyntaxError
	moved    bool // an object was out of order: the second pass is needed

	frames    []frame  // the open containers
	mems      []member // the members of the open objects
	recs      []rec    // objects out of order, and those holding one, in document order
	sorted    []piece  // the members of the objects out of order, in key order
	keys      []byte   // unescaped names whose canonical form has escapes
	order     []int32  // the order of the members of the object sorted last
	shape     []member // its members, names in shapeKeys
	shapeKeys []byte
}

func (p *parser) release() {
	if cap(p.out) > 64*maxPooled || cap(p.mems) > maxPooled || cap(p.recs) > maxPooled || cap(p.sorted) > maxPooled || cap(p.keys) > maxPooled {
		return // too large to keep
	}
	*p = parser{out: p.out[:0], frames: p.frames[:0], mems: p.mems[:0], recs: p.recs[:0], sorted: p.sorted[:0], keys: p.keys[:0], order: p.order[:0], shape: p.shape[:0], shapeKeys: p.shapeKeys[:0]}
	parsers.Put(p)
}

// frame is an open container: for an array, the index of the element
// being read; for an object, the member being read in mems (-1 between
// members).
type frame struct {
	obj   bool
	index int
}

// member is "name":value at out[start:end], its unescaped name at
// out[ka:kb] (or keys[ka:kb] when esc); recs[rec:] are the records after
// its start.
type member struct {
	start, end int
	ka, kb     int
	rec        int
	word       uint64 // the name's first 8 bytes, big endian, zero padded
	esc        bool
}

// piece is a member as the second pass copies it: out[start:end], the
// records after its start recs[rec:].
type piece struct{ start, end, rec int }

// rec is an object whose members are out[start:end] (past its '{', at
// its '}'); when it is out of order, its members in key order are
// sorted[m0:m1] (m1 > 0); recs[next:] are the records after its end.
type rec struct {
	start, end int
	m0, m1     int
	next       int
}

func (p *parser) name(m *member) []byte {
	if m.esc {
		return p.keys[m.ka:m.kb]
	}
	return p.output(m.ka, m.kb)
}

// at returns the output offset of src[i], i at or past pend.
func (p *parser) at(i int) int { return len(p.out) + i - p.pend }

// flush copies the pending source before src[i] to out.
func (p *parser) flush(i int) {
	p.out = append(p.out, p.src[p.pend:i]...)
	p.pend = i
}

// replace writes b for the source up to src[i] and src[i:j], which the
// output drops or rewrites.
func (p *parser) replace(i, j int, b ...byte) {
	p.flush(i)
	p.out = append(p.out, b...)
	p.pend = j
}

// output returns the output [s, e) written so far.
func (p *parser) output(s, e int) []byte {
	if e > len(p.out) {
		if s >= len(p.out) {
			d := p.pend - len(p.out)
			return p.src[s+d : e+d]
		}
		p.flush(p.pend + e - len(p.out))
	}
	return p.out[s:e]
}

// compare orders the names of a and b as [Compare] does, most often by
// their first 8 bytes: words that differ and hold no byte of non-ASCII
// order as their names do.
func (p *parser) compare(a, b *member) int {
	const highs = 0x8080808080808080
	switch x, y := a.word, b.word; {
	case x == y || (x|y)&highs != 0:
		return Compare(p.name(a), p.name(b))
	case x < y:
		return -1
	}
	return 1
}

// fail records the first error, at offset i, and returns -1. Any error at
// the end of the input is that the input ended: a truncated document says
// so, not what it was looking for there.
func (p *parser) fail(i int, msg string) int {
	if i >= len(p.src) {
		msg = "unexpected end of input"
	}
	return p.record(i, msg)
}

// record records the first error, at offset i, and returns -1.
func (p *parser) record(i int, msg string) int {
	if p.err == nil {
		p.err = &SyntaxError{Offset: i, Pointer: p.pointer(), Msg: msg}
	}
	return -1
}

// pointer renders the position of the parse as an RFC 6901 pointer.
func (p *parser) pointer() string {
	var b strings.Builder
	for _, f := range p.frames {
		switch {
		case !f.obj:
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(f.index))
		case f.index >= 0:
			b.WriteByte('/')
			name := string(p.name(&p.mems[f.index]))
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(name))
		}
	}
	return b.String()
}

// space returns the position of the first byte at or after i that is not
// JSON white space.
func (p *parser) space(i int) int {
	if i < len(p.src) && p.src[i] > ' ' {
		return i // compact JSON: no white space
	}
	return p.spaces(i)
}

func (p *parser) spaces(i int) int {
	j := i
	for j < len(p.src) {
		switch p.src[j] {
		case ' ', '\t', '\n', '\r':
			j++
			continue
		}
		break
	}
	if j > p.pend && j > i {
		p.replace(max(i, p.pend), j) // white space is dropped
	}
	return j
}

// value writes the canonical form of the value at src[i] and returns the
// position after it, or -1.
func (p *parser) value(i int) int {
	src := p.src
	if i >= len(src) {
		return p.fail(i, "unexpected end of input")
	}
	b := src[i]
	switch b {
	case '"':
		return p.str(i)
	case '{', '[':
		if len(p.frames) == MaxDepth {
			return p.fail(i, "nesting deeper than "+strconv.Itoa(MaxDepth))
		}
		if b == '{' {
			return p.object(i)
		}
		return p.array(i)
	case 't', 'f', 'n':
		lit := "null"
		switch b {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if len(src)-i < len(lit) || string(src[i:i+len(lit)]) != lit {
			return p.fail(i, "invalid literal, expected "+lit)
		}
		return i + len(lit)
	}
	if b == '-' || b >= '0' && b <= '9' {
		return p.num(i)
	}
	return p.fail(i, "invalid character "+strconv.QuoteRune(rune(b))+" looking for a value")
}

func (p *parser) array(i int) int {
	p.frames = append(p.frames, frame{})
	i = p.space(i + 1)
	if i < len(p.src) && p.src[i] == ']' {
		p.frames = p.frames[:len(p.frames)-1]
		return i + 1
	}
	for {
		if i = p.value(p.space(i)); i < 0 {
			return -1
		}
		switch i = p.space(i); {
		case i >= len(p.src):
			return p.fail(i, "unexpected end of input in array")
		case p.src[i] == ',':
			p.frames[len(p.frames)-1].index++
			i++
			continue
		case p.src[i] != ']':
			return p.fail(i, "expected ',' or ']' in array")
		}
		p.frames = p.frames[:len(p.frames)-1]
		return i + 1
	}
}

func (p *parser) object(i int) int {
	r := len(p.recs)
	p.recs = append(p.recs, rec{start: p.at(i + 1)})
	base := len(p.mems)
	p.frames = append(p.frames, frame{obj: true, index: -1})
	f := len(p.frames) - 1
	i = p.space(i + 1)
	if i < len(p.src) && p.src[i] == '}' {
		i++
	} else {
		for {
			if i = p.space(i); i >= len(p.src) || p.src[i] != '"' {
				return p.fail(i, "expected a string key in object")
			}
			m := member{start: p.at(i), rec: len(p.recs)}
			if i = p.str(i); i < 0 {
				return -1
			}
			m.ka, m.kb = m.start+1, p.at(i)-1
			if p.esc && slices.Contains(p.output(m.ka, m.kb), '\\') {
				n := len(p.keys)
				p.keys = Unquote(p.keys, p.output(m.ka, m.kb))
				m.ka, m.kb, m.esc = n, len(p.keys), true
			}
			if name := p.name(&m); len(name) >= 8 {
				m.word = binary.BigEndian.Uint64(name)
			} else {
				for k, c := range name {
					m.word |= uint64(c) << (56 - 8*k)
				}
			}
			p.mems = append(p.mems, m)
			p.frames[f].index = len(p.mems) - 1
			if i = p.space(i); i >= len(p.src) || p.src[i] != ':' {
				return p.fail(i, "expected ':' after object key")
			}
			if i = p.value(p.space(i + 1)); i < 0 {
				return -1
			}
			p.mems[len(p.mems)-1].end = p.at(i)
			switch i = p.space(i); {
			case i >= len(p.src):
				return p.fail(i, "unexpected end of input in object")
			case p.src[i] == ',':
				p.frames[f].index = -1
				i++
				continue
			case p.src[i] != '}':
				return p.fail(i, "expected ',' or '}' in object")
			}
			i++
			break
		}
	}
	if !p.close(r, base, f, i) {
		return -1
	}
	p.frames = p.frames[:f]
	p.mems = p.mems[:base]
	return i
}

// close completes the record r of the object whose members are mems[base:]
// and whose '}' is at src[i-1]: it sorts the members when they are out of
// order and refuses duplicate names.
func (p *parser) close(r, base, f, i int) bool {
	ms := p.mems[base:]
	rc := &p.recs[r]
	rc.end, rc.next = p.at(i-1), len(p.recs)
	inOrder := true
	for k := 1; k < len(ms); k++ {
		if p.compare(&ms[k-1], &ms[k]) >= 0 {
			inOrder = false
			break
		}
	}
	if inOrder {
		if r == len(p.recs)-1 {
			p.recs = p.recs[:r] // nothing out of order in it
		}
		return true
	}
	if p.sameShape(ms) { // the names of the object out of order before it
		m0 := len(p.sorted)
		for _, k := range p.order {
			p.sorted = append(p.sorted, piece{ms[k].start, ms[k].end, ms[k].rec})
		}
		rc.m0, rc.m1 = m0, len(p.sorted)
		p.moved = true
		return true
	}
	// Sort the members' indexes: an insertion sort for most objects,
	// which moves 4 bytes a step, not a member.
	p.order = p.order[:0]
	for k := range ms {
		p.order = append(p.order, int32(k))
	}
	o := p.order
	if len(o) <= 16 {
		for k := 1; k < len(o); k++ {
			for l := k; l > 0 && p.compare(&ms[o[l-1]], &ms[o[l]]) > 0; l-- {
				o[l-1], o[l] = o[l], o[l-1]
			}
		}
	} else {
		slices.SortStableFunc(o, func(a, b int32) int { return p.compare(&ms[a], &ms[b]) })
	}
	for k := 1; k < len(o); k++ {
		if string(p.name(&ms[o[k-1]])) == string(p.name(&ms[o[k]])) {
			p.frames[f].index = base + int(o[k])
			p.record(i, "duplicate key "+strconv.Quote(string(p.name(&ms[o[k]]))))
			return false
		}
	}
	m0 := len(p.sorted)
	for _, k := range o {
		p.sorted = append(p.sorted, piece{ms[k].start, ms[k].end, ms[k].rec})
	}
	p.shape = append(p.shape[:0], ms...) // its names, for sameShape
	p.shapeKeys = p.shapeKeys[:0]
	for k := range p.shape {
		n := len(p.shapeKeys)
		p.shapeKeys = append(p.shapeKeys, p.name(&p.shape[k])...)
		p.shape[k].ka, p.shape[k].kb = n, len(p.shapeKeys)
	}
	rc = &p.recs[r]
	rc.m0, rc.m1 = m0, len(p.sorted)
	p.moved = true
	return true
}

// sameShape reports whether the members ms have the names, in order, of
// the object sorted last, whose order (p.order) is then theirs: the
// entries of a list (a lorebook's) often do. Their first 8 bytes are
// compared as words.
func (p *parser) sameShape(ms []member) bool {
	if len(ms) != len(p.shape) || len(ms) < 2 {
		return false
	}
	for k := range ms {
		a, b := &ms[k], &p.shape[k]
		if a.word != b.word || a.kb-a.ka != b.kb-b.ka || (a.kb-a.ka > 8 && string(p.name(a)) != string(p.shapeKeys[b.ka:b.kb])) {
			return false
		}
	}
	return true
}

// emit is the second pass: it appends res[s:e], res the first pass's
// output, with the members of the objects out of order in it (recs[ri:])
// in key order, and returns the extended buffer.
func (p *parser) emit(dst, res []byte, s, e, ri int) []byte {
	for ri < len(p.recs) && p.recs[ri].start < e {
		r := p.recs[ri]
		if r.m1 == 0 {
			ri++ // in order: the records inside it follow
			continue
		}
		dst = append(dst, res[s:r.start]...)
		for k, m := range p.sorted[r.m0:r.m1] {
			if k > 0 {
				dst = append(dst, ',')
			}
			if m.rec == len(p.recs) || p.recs[m.rec].start >= m.end {
				dst = append(dst, res[m.start:m.end]...) // nothing out of order in it
			} else {
				dst = p.emit(dst, res, m.start, m.end, m.rec)
			}
		}
		s, ri = r.end, r.next
	}
	return append(dst, res[s:e]...)
}
