package card

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
)

// The package's one way to walk JSON: a few functions over text that
// internal/jcs has already accepted, canonical or not (white space is
// skipped), so they check nothing and cannot fail.

// space returns the position of the first byte at or after i that is not
// JSON white space.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string at b[i] ('"'). Most strings
// of a card are names and short values: the 8 bytes after the quote are
// looked at first, a word at a time. Past them it jumps from quote to
// quote and counts the backslashes before each.
func skipString(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if i+9 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i+1:])
		q, e := w^(ones*'"'), w^(ones*'\\')
		if m := ((q-ones)&^q | (e-ones)&^e) & highs; m != 0 {
			if j := i + 1 + bits.TrailingZeros64(m)>>3; b[j] == '"' {
				return j + 1
			}
		}
	}
	for i++; ; i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		k := i - 1
		for b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
	}
}

// structural marks the bytes skipValue stops at inside a container.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipValue returns the end of the value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			for !structural[b[i]] {
				if i++; i == len(b) {
					return i
				}
			}
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			default:
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// item is a member of an object or an element of an array: the member's
// name is b[ks:ke] (quotes included; ks == ke for an element), its value
// starts at vs.
type item struct{ ks, ke, vs int }

// items calls f with each member or element of the container at b[i], in
// order. f returns the end of the value when it has read it, 0 to have
// it skipped, or -1 to stop. items returns the end of the container, or
// -1 when f stopped.
func items(b []byte, i int, f func(it item) int) int {
	obj := b[i] == '{'
	for i = space(b, i+1); b[i] != '}' && b[i] != ']'; {
		it := item{ks: i, ke: i}
		if obj {
			it.ke = skipString(b, i)
			i = space(b, space(b, it.ke)+1) // past ':'
		}
		it.vs = i
		switch e := f(it); {
		case e < 0:
			return -1
		case e == 0:
			i = skipValue(b, i)
		default:
			i = e
		}
		if i = space(b, i); b[i] == ',' {
			i = space(b, i+1)
		}
	}
	return i + 1
}

// text returns the text of the string b[s:e] (quotes included).
func text(b []byte, s, e int) string {
	body := b[s+1 : e-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	return string(jcs.Unquote(nil, body))
}

// kind classifies the value at b[i]: '"' string, '{' object, '[' array,
// 't' boolean, 'n' null, '0' number.
func kind(b []byte, i int) byte {
	switch c := b[i]; c {
	case '"', '{', '[', 'n':
		return c
	case 't', 'f':
		return 't'
	}
	return '0'
}

// index lists the containers of a document of over 256 bytes, by start:
// their starts and ends. A reading of a container then skips a large one
// inside it at once, where reading each container of a path would read
// the rest of the path again, the document once per level.
type index [][2]int

func indexOf(doc []byte) index {
	var ix index
	var open []int
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '"':
			i = skipString(doc, i) - 1
		case '{', '[':
			open = append(open, len(ix))
			ix = append(ix, [2]int{i, -1})
		case '}', ']':
			k := open[len(open)-1]
			open = open[:len(open)-1]
			ix[k][1] = i + 1
		}
	}
	return slices.DeleteFunc(ix, func(e [2]int) bool { return e[1]-e[0] <= 256 })
}

// end returns the end of the container at i when ix lists it.
func (ix index) end(i int) (int, bool) {
	k, ok := slices.BinarySearchFunc(ix, i, func(e [2]int, s int) int { return e[0] - s })
	if !ok {
		return 0, false
	}
	return ix[k][1], true
}
