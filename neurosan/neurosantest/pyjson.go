package neurosantest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The real server is Python: every byte it sends is json.dumps output with
// the default settings (read in its source), and the fake writes the same
// bytes. json.dumps separates items with ", " and keys with ": ", escapes
// every character outside printable ASCII as \uXXXX (lowercase hex, a
// surrogate pair above U+FFFF) and the usual \" \\ \n \r \t \b \f, leaves
// '/' alone, writes floats with repr (1.0, 1e+16, 1e-05), integers as they
// are, and non-finite floats as NaN, Infinity and -Infinity. Bodies written
// through Tornado's RequestHandler.write(dict) are json.dumps output with
// "</" replaced by "<\/".
//
// The fake builds each value as JSON text in the order the server builds
// its dictionary, then re-encodes that text with appendPy, which reads it
// as Python's json.loads would (NaN and Infinity accepted, a number with a
// fraction or an exponent is a float, anything else an int, a repeated key
// keeps its first position and its last value) and writes it as json.dumps
// does.

// maxPyDepth bounds nesting, as Python's recursion limit does.
const maxPyDepth = 1000

// appendPy appends src, any JSON text (NaN and Infinity allowed), as
// Python's json.dumps writes the value json.loads reads from it.
func appendPy(dst, src []byte) ([]byte, error) {
	p := pyParser{src: src}
	p.ws()
	dst, err := p.value(dst, 0)
	if err != nil {
		return dst, err
	}
	p.ws()
	if p.i != len(p.src) {
		return dst, fmt.Errorf("neurosantest: JSON has trailing data at byte %d", p.i)
	}
	return dst, nil
}

// pyJSON re-encodes src in Python's format, panicking on invalid JSON: the
// fake builds its values itself, and a script's raw values are checked
// before they reach it.
func pyJSON(src []byte) []byte {
	b, err := appendPy(nil, src)
	if err != nil {
		panic(err)
	}
	return b
}

// tornadoJSON is what RequestHandler.write(dict) sends.
func tornadoJSON(src []byte) []byte {
	return bytes.ReplaceAll(pyJSON(src), []byte("</"), []byte(`<\/`))
}

// validPy reports whether raw is JSON as Python reads it.
func validPy(raw []byte) error {
	_, err := appendPy(nil, raw)
	return err
}

type pyParser struct {
	src []byte
	i   int
	// nonFiniteNull writes NaN, Infinity and -Infinity as null.
	nonFiniteNull bool
}

var errPySyntax = errors.New("neurosantest: invalid JSON")

func (p *pyParser) fail() error { return fmt.Errorf("%w at byte %d", errPySyntax, p.i) }

func (p *pyParser) ws() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) lit(s string) bool {
	if bytes.HasPrefix(p.src[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

func (p *pyParser) value(dst []byte, depth int) ([]byte, error) {
	if depth > maxPyDepth {
		return dst, fmt.Errorf("neurosantest: JSON nested deeper than %d", maxPyDepth)
	}
	if p.i >= len(p.src) {
		return dst, p.fail()
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(dst, depth)
	case c == '[':
		return p.array(dst, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return dst, err
		}
		return appendPyString(dst, s), nil
	case p.lit("true"), p.lit("false"), p.lit("null"):
		return append(dst, p.src[start:p.i]...), nil
	case p.lit("NaN"), p.lit("Infinity"), p.lit("-Infinity"):
		if p.nonFiniteNull {
			return append(dst, "null"...), nil
		}
		return append(dst, p.src[start:p.i]...), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number(dst)
	}
	return dst, p.fail()
}

type pyMember struct {
	key string
	val []byte
}

func (p *pyParser) object(dst []byte, depth int) ([]byte, error) {
	p.i++ // {
	var members []pyMember
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return append(dst, "{}"...), nil
	}
	for {
		p.ws()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return dst, p.fail()
		}
		k, err := p.str()
		if err != nil {
			return dst, err
		}
		p.ws()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return dst, p.fail()
		}
		p.i++
		p.ws()
		v, err := p.value(nil, depth+1)
		if err != nil {
			return dst, err
		}
		members = setMember(members, k, v)
		p.ws()
		if p.i >= len(p.src) {
			return dst, p.fail()
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] != '}' {
			return dst, p.fail()
		}
		p.i++
		break
	}
	dst = append(dst, '{')
	for j, m := range members {
		if j > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendPyString(dst, m.key)
		dst = append(dst, ": "...)
		dst = append(dst, m.val...)
	}
	return append(dst, '}'), nil
}

// setMember adds or replaces a key as a Python dict does: a repeated key
// keeps its first position and takes the last value.
func setMember(ms []pyMember, k string, v []byte) []pyMember {
	for i := range ms {
		if ms[i].key == k {
			ms[i].val = v
			return ms
		}
	}
	return append(ms, pyMember{k, v})
}

func (p *pyParser) array(dst []byte, depth int) ([]byte, error) {
	p.i++ // [
	dst = append(dst, '[')
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return append(dst, ']'), nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			dst = append(dst, ", "...)
		}
		p.ws()
		var err error
		if dst, err = p.value(dst, depth+1); err != nil {
			return dst, err
		}
		p.ws()
		if p.i >= len(p.src) {
			return dst, p.fail()
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] != ']' {
			return dst, p.fail()
		}
		p.i++
		return append(dst, ']'), nil
	}
}

// str reads a string token and returns its value. Go decodes a lone
// surrogate escape to U+FFFD where Python keeps it: the one place the fake
// can differ, and no server-side text carries one.
func (p *pyParser) str() (string, error) {
	start := p.i
	p.i++ // "
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal(p.src[start:p.i], &s); err != nil {
				return "", fmt.Errorf("%w at byte %d: %v", errPySyntax, start, err)
			}
			return s, nil
		}
		p.i++
	}
	return "", p.fail()
}

// number reads a number token: with a fraction or an exponent it is a
// float, written with repr; otherwise an int, written as it is.
func (p *pyParser) number(dst []byte) ([]byte, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.src) && p.src[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return dst, p.fail()
	}
	float := false
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return dst, p.fail()
		}
		float = true
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return dst, p.fail()
		}
		float = true
	}
	tok := string(p.src[start:p.i])
	if !float {
		if tok == "-0" {
			tok = "0"
		}
		return append(dst, tok...), nil
	}
	f, _ := strconv.ParseFloat(tok, 64) // out of range gives ±Inf, as float() does
	if p.nonFiniteNull && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return append(dst, "null"...), nil
	}
	return appendPyFloat(dst, f), nil
}

// appendPyFloat appends f as Python's repr writes it: the shortest digits
// that read back to f, in fixed notation when the decimal point falls
// within 16 digits (with ".0" for a whole number), otherwise as d.ddde±XX.
func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0 && math.Signbit(f):
		return append(b, "-0.0"...)
	case f == 0:
		return append(b, "0.0"...)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	if s[0] == '-' {
		b = append(b, '-')
		s = s[1:]
	}
	mant, exp, _ := bytes.Cut([]byte(s), []byte("e"))
	e, _ := strconv.Atoi(string(exp))
	digits := bytes.Replace(mant, []byte("."), nil, 1)
	point := e + 1 // digits are 0.d1d2… × 10^point
	if point <= -4 || point > 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(append(b, '.'), digits[1:]...)
		}
		b = append(b, 'e')
		if e < 0 {
			b, e = append(b, '-'), -e
		} else {
			b = append(b, '+')
		}
		if e < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(e), 10)
	}
	switch {
	case point <= 0:
		b = append(b, "0."...)
		b = append(b, bytes.Repeat([]byte("0"), -point)...)
		return append(b, digits...)
	case point >= len(digits):
		b = append(b, digits...)
		b = append(b, bytes.Repeat([]byte("0"), point-len(digits))...)
		return append(b, ".0"...)
	}
	b = append(b, digits[:point]...)
	b = append(b, '.')
	return append(b, digits[point:]...)
}

// appendPyString appends s quoted as json.dumps does with ensure_ascii.
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b = append(b, byte(r))
			case r < 0x10000:
				b = u(b, r)
			default:
				r -= 0x10000
				b = u(b, 0xd800|r>>10&0x3ff)
				b = u(b, 0xdc00|r&0x3ff)
			}
		}
	}
	return append(b, '"')
}

// pyObject reads a JSON object as Python does and returns its members with
// their values as they were written, in order (a repeated key keeps its
// first position and its last value). errNotObject reports valid JSON that
// is not an object.
func pyObject(src []byte) ([]pyMember, error) {
	if err := validPy(src); err != nil {
		return nil, err
	}
	p := pyParser{src: src}
	p.ws()
	if p.src[p.i] != '{' {
		return nil, errNotObject
	}
	p.i++
	var ms []pyMember
	for {
		p.ws()
		if p.src[p.i] == '}' {
			return ms, nil
		}
		if p.src[p.i] == ',' {
			p.i++
			p.ws()
		}
		k, _ := p.str()
		p.ws()
		p.i++ // :
		p.ws()
		start := p.i
		p.value(nil, 1)
		ms = setMember(ms, k, p.src[start:p.i])
	}
}

var errNotObject = errors.New("neurosantest: JSON is not an object")

// member returns the raw value of key k, or nil.
func member(ms []pyMember, k string) []byte {
	for _, m := range ms {
		if m.key == k {
			return m.val
		}
	}
	return nil
}

// goJSON re-encodes src with NaN, Infinity and -Infinity as null, so that
// encoding/json can read the structure the fake needs from it.
func goJSON(src []byte) ([]byte, error) {
	p := pyParser{src: src, nonFiniteNull: true}
	p.ws()
	b, err := p.value(nil, 0)
	return b, err
}
