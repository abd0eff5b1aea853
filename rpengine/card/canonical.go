package card

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// AppendCanonical appends the RFC 8785 (JCS) canonical form of the JSON
// document src to dst and returns the extended buffer. It accepts any JSON
// value at the root and rejects what RFC 8785 rejects (duplicate keys,
// invalid UTF-8, lone surrogates, numbers beyond the IEEE-754 double range)
// with a *[ParseError]. src is not modified or retained.
func AppendCanonical(dst, src []byte) ([]byte, error) {
	c := getCanon(src, dst)
	err := c.run()
	out := c.out
	putCanon(c)
	return out, err
}

// canon is a one-pass canonicalizer: it parses src and writes canonical
// output straight into out, without a tree of interface values. An object's
// members are written in source order, then reordered in place by their
// unescaped keys in UTF-16 code unit order (RFC 8785 section 3.2.3).
type canon struct {
	src     []byte
	pos     int
	out     []byte
	members []member  // stack of the members of the objects being written
	keys    []byte    // unescaped keys that had escapes in the source
	tmp     []byte    // reorder scratch
	path    []pathTok // where the parser is, for error pointers
	depth   int
	unsafe  bool // a number that the engine may print differently was seen
	err     *ParseError
	buf     []byte // pooled output buffer for callers that only hash

	orders     orderCache
	stopUnsafe bool   // fail at the first hash-unsafe number
	unsafeLit  string // that number
}

// member is one object member written to out[start:end] as "key":value.
// Its unescaped key is src[ka:kb], or keys[ka:kb] when the source had
// escapes. Offsets, not slices: a pointer-free struct needs no GC write
// barriers while members are sorted.
type member struct {
	start, end int
	ka, kb     int
	esc        bool
}

func (c *canon) key(m *member) []byte {
	if m.esc {
		return c.keys[m.ka:m.kb]
	}
	return c.src[m.ka:m.kb]
}

type pathTok struct {
	member int // index into members, -1 for an array index, or noMember
	index  int
}

const noMember = -2

func (c *canon) run() error {
	c.skipWS()
	if c.value() {
		c.skipWS()
		if c.pos != len(c.src) {
			c.fail("unexpected data after the JSON value")
		}
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

// pointer renders the current parser path as an RFC 6901 JSON Pointer.
func (c *canon) pointer() string {
	var b strings.Builder
	for _, t := range c.path {
		if t.member == noMember {
			continue
		}
		b.WriteByte('/')
		if t.member < 0 {
			b.WriteString(strconv.Itoa(t.index))
			continue
		}
		b.WriteString(escapeToken(string(c.key(&c.members[t.member]))))
	}
	return b.String()
}

func (c *canon) fail(msg string) bool {
	if c.err == nil {
		c.err = &ParseError{Pointer: c.pointer(), Offset: c.pos, Msg: msg}
	}
	return false
}

func (c *canon) skipWS() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canon) value() bool {
	if c.pos >= len(c.src) {
		return c.fail("unexpected end of input")
	}
	switch b := c.src[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		_, ok := c.str()
		return ok
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return c.fail("invalid character " + strconv.QuoteRune(rune(c.src[c.pos])) + " looking for a value")
}

func (c *canon) literal(s string) bool {
	if !bytes.HasPrefix(c.src[c.pos:], []byte(s)) {
		return c.fail("invalid literal, expected " + s)
	}
	c.pos += len(s)
	c.out = append(c.out, s...)
	return true
}

func (c *canon) enter() bool {
	c.depth++
	if c.depth > maxDepth {
		return c.fail("nesting deeper than " + strconv.Itoa(maxDepth))
	}
	return true
}

func (c *canon) array() bool {
	if !c.enter() {
		return false
	}
	c.pos++
	c.out = append(c.out, '[')
	c.skipWS()
	if c.pos < len(c.src) && c.src[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		c.depth--
		return true
	}
	c.path = append(c.path, pathTok{member: -1})
	for i := 0; ; i++ {
		c.path[len(c.path)-1].index = i
		c.skipWS()
		if !c.value() {
			return false
		}
		c.skipWS()
		if c.pos >= len(c.src) {
			return c.fail("unexpected end of input in array")
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			c.path = c.path[:len(c.path)-1]
			c.depth--
			return true
		default:
			return c.fail("expected ',' or ']' in array")
		}
	}
}

// object is long because it is the parser's member loop plus the reorder.
func (c *canon) object() bool {
	if !c.enter() {
		return false
	}
	c.pos++
	c.out = append(c.out, '{')
	base := len(c.members)
	start := len(c.out)
	c.skipWS()
	if c.pos < len(c.src) && c.src[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		c.depth--
		return true
	}
	c.path = append(c.path, pathTok{})
	for first := true; ; first = false {
		c.path[len(c.path)-1].member = noMember // a key error points at the object
		c.skipWS()
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return c.fail("expected a string key in object")
		}
		if !first {
			c.out = append(c.out, ',')
		}
		m := member{start: len(c.out), ka: c.pos + 1}
		esc, ok := c.str()
		if !ok {
			return false
		}
		m.kb = c.pos - 1
		if esc {
			n := len(c.keys)
			c.keys = appendUnescaped(c.keys, c.src[m.ka:m.kb])
			m.ka, m.kb, m.esc = n, len(c.keys), true
		}
		c.members = append(c.members, m)
		c.path[len(c.path)-1].member = len(c.members) - 1
		c.skipWS()
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return c.fail("expected ':' after object key")
		}
		c.pos++
		c.out = append(c.out, ':')
		c.skipWS()
		if !c.value() {
			return false
		}
		c.members[len(c.members)-1].end = len(c.out)
		c.skipWS()
		if c.pos >= len(c.src) {
			return c.fail("unexpected end of input in object")
		}
		if c.src[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.src[c.pos] != '}' {
			return c.fail("expected ',' or '}' in object")
		}
		c.pos++
		break
	}
	if !c.reorder(base, start) {
		return false
	}
	c.path = c.path[:len(c.path)-1]
	c.members = c.members[:base]
	c.depth--
	c.out = append(c.out, '}')
	return true
}

// reorder sorts the members written since start by key, rejects duplicate
// keys, and rewrites them comma-separated. Members already in order (as in
// canonical input) are left where they are.
func (c *canon) reorder(base, start int) bool {
	ms := c.members[base:]
	sorted := true
	for i := 1; i < len(ms); i++ {
		if compareUTF16(c.key(&ms[i-1]), c.key(&ms[i])) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return true
	}
	if !c.orders.apply(c, ms) {
		c.orders.remember(c, ms)
		slices.SortStableFunc(ms, func(a, b member) int { return compareUTF16(c.key(&a), c.key(&b)) })
		for i := 1; i < len(ms); i++ {
			if bytes.Equal(c.key(&ms[i-1]), c.key(&ms[i])) {
				c.orders.forget()
				c.path[len(c.path)-1].member = base + i
				return c.fail("duplicate key " + strconv.Quote(string(c.key(&ms[i]))))
			}
		}
		c.orders.learn(ms)
	}
	c.tmp = append(c.tmp[:0], c.out[start:]...)
	c.out = c.out[:start]
	for i := range ms {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.tmp[ms[i].start-start:ms[i].end-start]...)
	}
	return true
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

const hexDigits = "0123456789abcdef"

// str writes the canonical form of the string at c.pos and reports whether
// the source had escapes.
func (c *canon) str() (esc, ok bool) {
	c.pos++
	c.out = append(c.out, '"')
	src := c.src
	for {
		run := c.pos
		for c.pos < len(src) {
			b := src[c.pos]
			if b < 0x20 || b == '"' || b == '\\' {
				break
			}
			if b < utf8.RuneSelf {
				c.pos++
				continue
			}
			r, size := utf8.DecodeRune(src[c.pos:])
			if r == utf8.RuneError && size == 1 {
				c.out = append(c.out, src[run:c.pos]...)
				return esc, c.fail("invalid UTF-8 in string")
			}
			c.pos += size
		}
		c.out = append(c.out, src[run:c.pos]...)
		if c.pos >= len(src) {
			return esc, c.fail("unterminated string")
		}
		switch b := src[c.pos]; {
		case b == '"':
			c.pos++
			c.out = append(c.out, '"')
			return esc, true
		case b < 0x20:
			return esc, c.fail("control character in string must be escaped")
		}
		esc = true
		r, ok := c.escape()
		if !ok {
			return esc, false
		}
		c.out = appendEscapedRune(c.out, r)
	}
}

// escape decodes the escape sequence at c.pos (a backslash).
func (c *canon) escape() (rune, bool) {
	src := c.src
	if c.pos+1 >= len(src) {
		return 0, c.fail("unterminated escape")
	}
	c.pos += 2
	switch src[c.pos-1] {
	case '"':
		return '"', true
	case '\\':
		return '\\', true
	case '/':
		return '/', true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
	default:
		c.pos -= 2
		return 0, c.fail("invalid escape")
	}
	r, ok := hex4(src, c.pos)
	if !ok {
		return 0, c.fail("invalid \\u escape")
	}
	c.pos += 4
	if r < 0xD800 || r > 0xDFFF {
		return r, true
	}
	if r <= 0xDBFF && c.pos+1 < len(src) && src[c.pos] == '\\' && src[c.pos+1] == 'u' {
		lo, ok := hex4(src, c.pos+2)
		if ok && lo >= 0xDC00 && lo <= 0xDFFF {
			c.pos += 6
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), true
		}
	}
	return 0, c.fail("lone surrogate in string")
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, b := range src[i : i+4] {
		switch {
		case b >= '0' && b <= '9':
			b -= '0'
		case b >= 'a' && b <= 'f':
			b -= 'a' - 10
		case b >= 'A' && b <= 'F':
			b -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(b)
	}
	return r, true
}

// appendEscapedRune writes r as RFC 8785 requires: the short escapes, other
// controls as \u00xx, everything else raw.
func appendEscapedRune(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// appendUnescaped decodes the body of a string already validated by str.
func appendUnescaped(dst, s []byte) []byte {
	c := canon{src: s}
	for c.pos < len(s) {
		if s[c.pos] != '\\' {
			dst = append(dst, s[c.pos])
			c.pos++
			continue
		}
		r, _ := c.escape()
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// number writes the canonical form of the number at c.pos: integers of up
// to 15 digits are copied, everything else goes through float64 and the
// ECMAScript Number-to-string rules (RFC 8785 section 3.2.2.3). It is long
// because it is the JSON number grammar, spelled out to avoid a regexp.
func (c *canon) number() bool {
	src := c.src
	start := c.pos
	i := start
	if src[i] == '-' {
		i++
	}
	digits := i
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	default:
		return c.fail("invalid number")
	}
	intEnd := i
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || src[i] < '0' || src[i] > '9' {
			c.pos = i
			return c.fail("invalid number: digit expected after '.'")
		}
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || src[i] < '0' || src[i] > '9' {
			c.pos = i
			return c.fail("invalid number: digit expected in exponent")
		}
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	c.pos = i
	lit := src[start:i]
	if intEnd != i || !intHashSafe(src[digits:i], digits > start) {
		c.unsafe = true
		if c.stopUnsafe {
			c.unsafeLit = string(lit)
			c.pos = start
			return c.fail("hash-unsafe number")
		}
	}
	if intEnd == i {
		if i-digits <= 15 {
			if digits > start && i-digits == 1 && src[digits] == '0' {
				lit = lit[1:] // -0 is 0
			}
			c.out = append(c.out, lit...)
			return true
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		c.pos = start
		return c.fail("number " + string(lit) + " is out of the IEEE-754 double range")
	}
	c.out = appendES6(c.out, f)
	return true
}

// intHashSafe reports whether an integer literal prints the same in JCS and
// in the engine: |n| <= 2^53 and not negative zero.
func intHashSafe(digits []byte, neg bool) bool {
	const limit = "9007199254740992"
	switch {
	case neg && len(digits) == 1 && digits[0] == '0':
		return false
	case len(digits) < len(limit):
		return true
	case len(digits) > len(limit):
		return false
	}
	return string(digits) <= limit
}

// appendES6 formats f as ECMAScript's Number.prototype.toString does.
func appendES6(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	// e is d[.ddd]e±x
	ei := bytes.IndexByte(e, 'e')
	var digs [20]byte
	nd := copy(digs[:], e[:1])
	if ei > 1 {
		nd += copy(digs[nd:], e[2:ei])
	}
	x, _ := strconv.Atoi(string(e[ei+1:]))
	n := x + 1 // decimal point position
	d := digs[:nd]
	switch {
	case nd <= n && n <= 21:
		dst = append(dst, d...)
		for i := nd; i < n; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := n; i < 0; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
