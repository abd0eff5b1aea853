// Package jsonstr tells, byte by byte, which bytes of JSON text stand
// outside strings: the one piece of lexing that neuro and neurosan do by
// hand, where a number's spelling or a token must be found in raw text.
package jsonstr

// Tracker follows JSON text one byte at a time. The zero value starts
// outside any string.
type Tracker struct {
	in, escaped bool
}

// Outside takes the next byte c and reports whether it stands outside a
// string. A string's quotes count as inside.
func (t *Tracker) Outside(c byte) bool {
	switch {
	case t.in:
		switch {
		case t.escaped:
			t.escaped = false
		case c == '\\':
			t.escaped = true
		case c == '"':
			t.in = false
		}
		return false
	case c == '"':
		t.in = true
		return false
	}
	return true
}
