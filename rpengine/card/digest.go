package card

import (
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Digest is a card's SHA-256 over its RFC 8785 canonical JSON. The zero
// value is not the digest of any card the package produces.
type Digest [32]byte

// String returns the digest as 64 lowercase hex characters, the wire form
// of targetHash and baseHash.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Format writes the digest as its 64 hex digits under %s, %v and %x
// (uppercase under %X), and quoted under %q: without it, %x printed the
// hex of the hex string (issue #32).
func (d Digest) Format(f fmt.State, verb rune) {
	s := d.String()
	switch verb {
	case 'X':
		s = strings.ToUpper(s)
	case 'q':
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// ParseDigest parses exactly 64 lowercase hex characters.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 64 {
		return d, fmt.Errorf("card: digest %q: want 64 hex characters, got %d", s, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return d, fmt.Errorf("card: digest %q: byte %d is not lowercase hex", s, i)
		}
	}
	_, _ = hex.Decode(d[:], []byte(s))
	return d, nil
}
