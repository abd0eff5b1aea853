package jcs

import (
	"bytes"
	"math"
	"strconv"
)

// num writes the canonical form of the number at src[i] and returns the
// position after it, or -1. An integer of up to 15 digits (not -0) is its
// own canonical form; any other number goes through float64 and the
// ECMAScript rules ([AppendNumber]).
func (p *parser) num(i int) int {
	src := p.src
	j := i
	if src[j] == '-' {
		j++
	}
	digits := j
	switch {
	case j < len(src) && src[j] == '0':
		j++
	case j < len(src) && src[j] >= '1' && src[j] <= '9':
		j = skipDigits(src, j)
	default:
		return p.fail(i, "invalid number")
	}
	intEnd := j
	if j < len(src) && src[j] == '.' {
		if j++; j >= len(src) || src[j] < '0' || src[j] > '9' {
			return p.fail(j, "invalid number: digit expected after '.'")
		}
		j = skipDigits(src, j)
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		if j++; j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j >= len(src) || src[j] < '0' || src[j] > '9' {
			return p.fail(j, "invalid number: digit expected in exponent")
		}
		j = skipDigits(src, j)
	}
	lit := src[i:j]
	if p.number != nil {
		if err := p.number(lit); err != nil {
			p.fail(i, "number "+string(lit)+" refused")
			p.err.Err = err
			return -1
		}
	}
	if intEnd == j && j-digits <= 15 && (j-digits > 1 || src[digits] != '0' || digits == i) {
		return j // canonical as it is
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		return p.fail(i, "number "+string(lit)+" is out of the IEEE-754 double range")
	}
	p.flush(i)
	p.out = AppendNumber(p.out, f)
	p.pend = j
	return j
}

func skipDigits(src []byte, j int) int {
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	return j
}

// AppendNumber appends f as ECMAScript's Number.prototype.toString
// writes it (RFC 8785 section 3.2.2.3): the shortest digits that read
// back as f, in plain notation from 1e-6 to 1e21 and in exponent
// notation outside, and -0 as 0. f must be finite.
func AppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±x
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	ei := bytes.IndexByte(e, 'e')
	var digs [20]byte
	d := append(digs[:0], e[0])
	if ei > 1 {
		d = append(d, e[2:ei]...)
	}
	x, _ := strconv.Atoi(string(e[ei+1:]))
	n := x + 1 // where the decimal point goes
	switch nd := len(d); {
	case nd <= n && n <= 21:
		dst = append(dst, d...)
		dst = append(dst, bytes.Repeat([]byte{'0'}, n-nd)...)
	case 0 < n && n <= 21:
		dst = append(append(append(dst, d[:n]...), '.'), d[n:]...)
	case -6 < n && n <= 0:
		dst = append(append(dst, '0', '.'), bytes.Repeat([]byte{'0'}, -n)...)
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if nd > 1 {
			dst = append(append(dst, '.'), d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
