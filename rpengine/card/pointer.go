package card

import "strings"

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")
var tokenUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// escapeToken escapes one RFC 6901 reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return tokenEscaper.Replace(s)
}

// appendTokens appends the unescaped tokens of the RFC 6901 pointer p to
// dst and returns the extended slice. It rejects a pointer that does not
// start with '/' and a '~' not followed by '0' or '1'.
func appendTokens(dst []string, p string) ([]string, bool) {
	if p == "" {
		return dst, true
	}
	if p[0] != '/' {
		return dst, false
	}
	for rest, more := p[1:], true; more; {
		var t string
		t, rest, more = strings.Cut(rest, "/")
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, false
			}
		}
		if strings.IndexByte(t, '~') >= 0 {
			t = tokenUnescaper.Replace(t)
		}
		dst = append(dst, t)
	}
	return dst, true
}

// isIndex reports whether tok is an RFC 6901 array index: 0 or [1-9][0-9]*.
func isIndex(tok string) bool {
	if tok == "" || len(tok) > 9 || (tok[0] == '0' && len(tok) > 1) {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}
