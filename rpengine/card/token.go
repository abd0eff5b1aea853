package card

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The tokens of the canonicalizer's first pass: strings and numbers.

// scanString returns the end (past the closing quote) of the string at
// src[i] when the string is its own canonical form: valid UTF-8 and no
// escape but the short ones other than \/, which RFC 8785 writes as they
// are. esc reports a backslash. ok is false at anything else (a \u or \/
// escape, an invalid escape, byte or sequence, the end of src): str then
// rewrites the string or reports what is wrong. It looks for what needs a
// look 8 bytes a step, and handles a short escape or a two- or three-byte
// character without leaving the loop.
func scanString(src []byte, i int) (end int, esc, ok bool) {
	i++
	for {
		for ; i+8 <= len(src); i += 8 {
			if m := specialMask(binary.LittleEndian.Uint64(src[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto look
			}
		}
		for i < len(src) && !special[src[i]] {
			i++
		}
		if i >= len(src) {
			return 0, esc, false
		}
	look:
		switch b := src[i]; {
		case b == '"':
			return i + 1, esc, true
		case b == '\\':
			if i+1 >= len(src) || !shortEscape[src[i+1]] {
				return 0, esc, false
			}
			esc = true
			i += 2
		case b < utf8.RuneSelf:
			return 0, esc, false // a control byte
		default:
			n := utf8Seq(src[i:])
			if n == 0 {
				return 0, esc, false
			}
			i += n
		}
	}
}

const hexDigits = "0123456789abcdef"

// shortEscape marks the escapes that are their own RFC 8785 form.
var shortEscape = [256]bool{'"': true, '\\': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// special marks the bytes a string scan stops at: controls, '"', '\\' and
// the lead and continuation bytes of multibyte UTF-8.
var special = func() (t [256]bool) {
	for b := range t {
		t[b] = b < 0x20 || b == '"' || b == '\\' || b >= utf8.RuneSelf
	}
	return t
}()

// specialMask sets the top bit of the bytes of w (in memory order, little
// endian) that are special, and of no byte before the first of them.
// x^0x02 maps '"' to 0x20 and keeps controls below 0x20, so one
// subtraction finds both: it borrows into the top bit of a byte below
// 0x21 (a borrow carries only upward, past the first such byte). Bytes
// with the top bit set are non-ASCII.
func specialMask(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ (ones * 0x02)
	e := w ^ (ones * '\\')
	return ((q-ones*0x21)|(e-ones))&^w&highs | w&highs
}

// utf8Seq returns the length of the valid UTF-8 sequence that starts p
// (p[0] >= 0x80), or 0 if it is invalid. The two- and three-byte forms,
// the text of most non-English cards, are checked inline.
func utf8Seq(p []byte) int {
	b := p[0]
	switch {
	case b >= 0xC2 && b <= 0xDF:
		if len(p) >= 2 && p[1]&0xC0 == 0x80 {
			return 2
		}
		return 0
	case b >= 0xE1 && b <= 0xEC, b == 0xEE, b == 0xEF:
		if len(p) >= 3 && p[1]&0xC0 == 0x80 && p[2]&0xC0 == 0x80 {
			return 3
		}
		return 0
	}
	r, n := utf8.DecodeRune(p)
	if r == utf8.RuneError && n == 1 {
		return 0
	}
	return n
}

// str writes the canonical form of the string at c.pos, rewriting its \u
// and \/ escapes, and reports whether the source had escapes; it reports
// what is wrong with a string scanString refused.
func (c *canon) str() (esc, ok bool) {
	src := c.src
	i := c.pos + 1
	for {
		for i < len(src) && !special[src[i]] {
			i++
		}
		if i >= len(src) {
			c.pos = len(src)
			return esc, c.fail("unterminated string")
		}
		switch b := src[i]; {
		case b == '"':
			c.pos = i + 1
			return esc, true
		case b == '\\':
			esc = true
			if i+1 < len(src) && shortEscape[src[i+1]] {
				i += 2 // canonical as it is
				continue
			}
			c.flush(i)
			c.pos = i
			r, ok := c.escape()
			if !ok {
				return esc, false
			}
			c.out = appendEscapedRune(c.out, r)
			i = c.pos
			c.pend = i
		case b >= utf8.RuneSelf:
			n := utf8Seq(src[i:])
			if n == 0 {
				c.pos = i
				return esc, c.fail("invalid UTF-8 in string")
			}
			i += n
		default:
			c.pos = i
			return esc, c.fail("control character in string must be escaped")
		}
	}
}

// shortInt returns the end of the number at src[i] when it is an integer
// of 1 to 15 digits, not -0 and with no leading zero: its own canonical
// form and hash-safe. Else 0, and number handles it.
func shortInt(src []byte, i int) int {
	d := i
	if src[d] == '-' {
		d++
	}
	j := d
	if d+8 <= len(src) {
		// The digits of a word at once: a byte below '0' borrows into its
		// top bit, one above '9' carries into it (past the first such
		// byte the lanes do not matter).
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		w := binary.LittleEndian.Uint64(src[d:])
		if m := ((w - ones*'0') | (w + ones*(0x80-'9'-1))) & highs; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
		} else {
			j += 8
		}
	}
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	switch n := j - d; {
	case n == 0 || n > 15:
		return 0
	case src[d] == '0' && (n > 1 || d > i):
		return 0
	}
	if j < len(src) && (src[j] == '.' || src[j] == 'e' || src[j] == 'E') {
		return 0
	}
	return j
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
	if intEnd == i && i-digits <= 15 {
		if digits > start && i-digits == 1 && src[digits] == '0' {
			c.flush(start) // -0 is 0
			c.pend++
		}
		return true // canonical as it is
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		c.pos = start
		return c.fail("number " + string(lit) + " is out of the IEEE-754 double range")
	}
	c.flush(start)
	c.out = appendES6(c.out, f)
	c.pend = i
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
