package jcs

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// str writes the canonical form of the string at src[i] ('"') and returns
// the position after it, or -1. A string without \u or \/ escapes is its
// own canonical form: RFC 8785 keeps the other short escapes and every
// character but the controls as they are.
func (p *parser) str(i int) int {
	src := p.src
	j := i + 1
	p.esc = false
	for {
		j = p.scan(j)
		if j >= len(src) {
			return p.fail(len(src), "unterminated string")
		}
		switch b := src[j]; {
		case b == '"':
			return j + 1
		case b == '\\':
			p.esc = true
			if j+1 < len(src) {
				switch src[j+1] {
				case '"', '\\', 'b', 'f', 'n', 'r', 't':
					j += 2 // canonical as it is
					continue
				}
			}
			r, n, msg := unescape(src, j)
			if msg != "" {
				return p.fail(j, msg)
			}
			p.flush(j)
			p.out = appendRune(p.out, r)
			j += n
			p.pend = j
		case b < 0x20:
			return p.fail(j, "control character in string must be escaped")
		default: // non-ASCII: a valid UTF-8 sequence, and more of them
			for j < len(src) && src[j] >= utf8.RuneSelf {
				n := utf8Len(src[j:])
				if n == 0 {
					return p.fail(j, "invalid UTF-8 in string")
				}
				j += n
			}
		}
	}
}

// utf8Len returns the length of the valid UTF-8 sequence that starts p
// (p[0] >= 0x80), or 0 if it is invalid. The two- and three-byte forms,
// the text of most cards that are not English, are checked inline.
func utf8Len(p []byte) int {
	switch b := p[0]; {
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
	if r, n := utf8.DecodeRune(p); r != utf8.RuneError || n > 1 {
		return n
	}
	return 0
}

// scan returns the position of the first byte at or after j that ends a
// run of plain string bytes: '"', '\\', a control byte, or a byte of
// non-ASCII UTF-8 (checked by str). It looks at 8 bytes a step: in a word,
// the top bit of the first such byte is set in m (a borrow carries only
// upward, so bytes after it may be set too).
func (p *parser) scan(j int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	src := p.src
	mask := func(w uint64) uint64 {
		q, e := w^(ones*'"'), w^(ones*'\\')
		return ((q-ones)&^q | (e-ones)&^e | (w-ones*0x20)&^w | w) & highs
	}
	for ; j+16 <= len(src); j += 16 { // two words a step
		m0, m1 := mask(binary.LittleEndian.Uint64(src[j:])), mask(binary.LittleEndian.Uint64(src[j+8:]))
		if m0 != 0 {
			return j + bits.TrailingZeros64(m0)>>3
		}
		if m1 != 0 {
			return j + 8 + bits.TrailingZeros64(m1)>>3
		}
	}
	for ; j+8 <= len(src); j += 8 {
		if m := mask(binary.LittleEndian.Uint64(src[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(src); j++ {
		if b := src[j]; b == '"' || b == '\\' || b < 0x20 || b >= utf8.RuneSelf {
			return j
		}
	}
	return j
}

// unescape decodes the escape at src[j] ('\\'): the rune and the length
// of the escape, or what is wrong with it.
func unescape(src []byte, j int) (rune, int, string) {
	if j+1 >= len(src) {
		return 0, 0, "unterminated escape"
	}
	switch src[j+1] {
	case '"', '\\', '/':
		return rune(src[j+1]), 2, ""
	case 'b':
		return '\b', 2, ""
	case 'f':
		return '\f', 2, ""
	case 'n':
		return '\n', 2, ""
	case 'r':
		return '\r', 2, ""
	case 't':
		return '\t', 2, ""
	case 'u':
	default:
		return 0, 0, "invalid escape"
	}
	r, ok := hex4(src, j+2)
	switch {
	case !ok:
		return 0, 0, "invalid \\u escape"
	case r < 0xD800 || r > 0xDFFF:
		return r, 6, ""
	case r <= 0xDBFF && j+7 < len(src) && src[j+6] == '\\' && src[j+7] == 'u':
		if lo, ok := hex4(src, j+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, ""
		}
	}
	return 0, 0, "lone surrogate in string"
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

// appendRune writes r as RFC 8785 writes it in a string: the short
// escapes, the other controls as \u00xx, everything else as it is.
func appendRune(dst []byte, r rune) []byte {
	switch r {
	case '"', '\\':
		return append(dst, '\\', byte(r))
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
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// AppendString appends s, valid UTF-8, as a canonical JSON string.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = appendRune(append(dst, s[run:i]...), rune(c))
			run = i + 1
		}
	}
	return append(append(dst, s[run:]...), '"')
}

// Unquote appends the text of body, the bytes between the quotes of a
// valid JSON string, with its escapes decoded.
func Unquote(dst, body []byte) []byte {
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			j := i + 1
			for j < len(body) && body[j] != '\\' {
				j++
			}
			dst = append(dst, body[i:j]...)
			i = j
			continue
		}
		r, n, msg := unescape(body, i)
		if msg != "" {
			return append(dst, body[i:]...) // not valid: kept as it is
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// Compare orders two UTF-8 strings by their UTF-16 code units, as RFC
// 8785 sorts member names (section 3.2.3). Byte order is code point
// order; the two differ only where a character at or above U+10000 (lead
// byte 0xF0 to 0xF4, a surrogate pair in UTF-16) meets one in U+E000 to
// U+FFFF (lead byte 0xEE or 0xEF): the former sorts first in UTF-16.
func Compare[A, B ~string | ~[]byte](a A, b B) int {
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
