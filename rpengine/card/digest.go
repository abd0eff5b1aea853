package card

import (
	"encoding/hex"
	"fmt"
)

// Digest is a card's SHA-256 over its RFC 8785 canonical JSON. The zero
// value is not the digest of any card the package produces.
type Digest [32]byte

// String returns the digest as 64 lowercase hex characters, the wire form
// of targetHash and baseHash.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

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
