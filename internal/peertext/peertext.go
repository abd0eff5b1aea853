// Package peertext prepares text that came from a peer (an engine, a
// server, a browser, a local process posing as one) for a log line or a
// person's terminal, so that a peer can neither flood the log nor drive
// the terminal (issue #16: a 7 MiB sessionId logged whole, ESC sequences
// in a clientVersion changing the window title).
//
// Every value taken from a peer goes through it wherever the library or
// a demo formats text for a person:
//
//   - [Clip]: one value in a log attribute or a line of text, bounded,
//     every character that is not graphic escaped (newlines included).
//   - [Quote]: the same inside a message, Go-quoted as strconv.Quote
//     would, so that the peer's part stands out.
//   - [Text]: multi-line text shown as data (a reply on stdout): newlines
//     and tabs kept, every other control character escaped, not bounded
//     (the caller bounds it).
//
// Escapes are Go's (\x1b, \n, \u009b, \u202e, \xff for a byte that is
// not UTF-8), so nothing that a terminal interprets (C0 and C1 controls,
// DEL, bare ESC, CSI and OSC in their 7-bit and 8-bit forms) and nothing
// that reorders text (bidirectional controls) reaches the output raw.
// Clip and Text do not double backslashes: a peer can make text look like
// an escape, but never produce a raw control character.
package peertext

import (
	"strconv"
	"unicode/utf8"
)

// Bounds for Clip and Quote, in bytes of the peer's text.
const (
	// LogBytes bounds a peer value in a log line. Ids and codes of the
	// protocol are under 64 bytes; an error message is a sentence.
	LogBytes = 256
	// LineBytes bounds a peer value shown to a person on one line (an
	// engine's error message, which may list a card's violations), and an
	// error text in a log line, whose peer parts are bounded already.
	LineBytes = 2048
)

// Clip returns s for one log value or one line shown to a person: at most
// limit bytes of s (cut at a character boundary; a first character longer
// than limit is kept whole), followed, when s was longer, by
// "…(+N bytes)"; every character that is not graphic (strconv.IsGraphic),
// and every byte that is not UTF-8, is escaped. The result is at most
// 4*max(limit, 4)+32 bytes. A limit below 1 is taken as 1.
func Clip(s string, limit int) string {
	if len(s) <= limit && printableASCII(s) {
		return s // ids, types, codes: the common case, without copying
	}
	head, rest := cut(s, limit)
	b := make([]byte, 0, len(head)+16)
	b = appendEscaped(b, head, false)
	return string(appendRest(b, rest))
}

// Quote is Clip inside double quotes, with quotes and backslashes escaped
// too, as strconv.Quote does: for a peer's value inside a message.
func Quote(s string, limit int) string {
	head, rest := cut(s, limit)
	b := strconv.AppendQuote(make([]byte, 0, len(head)+18), head)
	return string(appendRest(b, rest))
}

// Text returns s for a terminal as multi-line data: newlines and tabs are
// kept, every other control character (C0, DEL, C1), every
// bidirectional-text control and every byte that is not UTF-8 is escaped;
// other text, backslashes and all, is unchanged. It does not bound s.
func Text(s string) string {
	for i, r := range s {
		if r == '\n' || r == '\t' || allowed(r, true) && (r != utf8.RuneError || isRuneError(s[i:])) {
			continue
		}
		return string(appendEscaped(make([]byte, 0, len(s)+16), s, true))
	}
	return s // nothing to escape: the common case, without copying
}

// isRuneError reports whether s starts with an encoded U+FFFD rather
// than a byte that is not UTF-8.
func isRuneError(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size == 3
}

// printableASCII reports whether s holds only bytes 0x20 to 0x7e.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// cut splits s after at most limit bytes, at a character boundary.
func cut(s string, limit int) (head string, rest int) {
	limit = max(limit, 1)
	if len(s) <= limit {
		return s, 0
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 { // a first character longer than limit: keep it whole
		_, n = utf8.DecodeRuneInString(s)
	}
	return s[:n], len(s) - n
}

func appendRest(b []byte, rest int) []byte {
	if rest == 0 {
		return b
	}
	b = append(b, "…(+"...)
	b = strconv.AppendInt(b, int64(rest), 10)
	return append(b, " bytes)"...)
}

// appendEscaped appends s with every character escaped that is not
// allowed: in text mode, everything but controls, bidirectional controls
// and invalid bytes is allowed, plus newline and tab; otherwise only
// graphic characters are.
func appendEscaped(b []byte, s string, text bool) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\x`...)
			b = appendHex(b, uint32(s[i]), 2)
		case text && (r == '\n' || r == '\t'):
			b = append(b, byte(r))
		case allowed(r, text):
			b = append(b, s[i:i+size]...)
		default:
			b = appendEscape(b, r)
		}
		i += size
	}
	return b
}

func allowed(r rune, text bool) bool {
	if !text {
		return strconv.IsGraphic(r)
	}
	return r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f) && !bidi(r)
}

// bidi reports whether r is a bidirectional-text control (Unicode
// Bidi_Control), which reorders what a person sees.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func appendEscape(b []byte, r rune) []byte {
	switch r {
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	}
	switch {
	case r < 0x80:
		return appendHex(append(b, `\x`...), uint32(r), 2)
	case r <= 0xffff:
		return appendHex(append(b, `\u`...), uint32(r), 4)
	}
	return appendHex(append(b, `\U`...), uint32(r), 8)
}

func appendHex(b []byte, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hex[v>>uint(shift)&0xf])
	}
	return b
}
