package card

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strconv"
	"sync"

	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
)

// MaxSize is the largest document or patch the package reads: the
// protocol's message limit, 8 MiB.
const MaxSize = 8 << 20

// Card is a parsed card that keeps every byte of meaning of its input:
// unknown fields, extension data and the source's key order are kept,
// because the card is kept as the document it was parsed from.
//
// A Card is immutable; all its methods may be called concurrently. Make
// one with [Parse], [Load], [Repair] or [New]: the zero Card is not a
// valid card.
type Card struct {
	raw        []byte
	digest     Digest
	unsafe     bool        // holds a number the engine may canonicalize differently
	violations []Violation // of the V2 rules
	portrait   []byte      // the PNG Load read it from, without the card

	// The canonical form and its index, made on first use (a patch needs
	// them; a card canonical as parsed has the form in raw): kept from
	// Parse, every card would be twice its size.
	once  sync.Once
	canon []byte
	big   index
}

// Parse checks data and returns the card it holds. data is copied. It
// rejects documents over [MaxSize], invalid JSON, duplicate keys (also
// after unescaping), invalid UTF-8, lone surrogates, numbers beyond the
// double range and a root that is not an object, with a *[ParseError]
// carrying the JSON Pointer of the fault. A card that breaks a Character
// Card V2 rule still parses: see [Card.Validate].
//
// Parse canonicalizes the card once, hashes the canonical form and checks
// the V2 rules on it, so [Card.Hash] and [Card.Validate] cost nothing.
func Parse(data []byte) (*Card, error) {
	if err := checkSize(data, "document"); err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, &ParseError{Msg: "the document starts with a UTF-8 byte order mark, which JSON text must not have (Repair removes it)"}
	}
	switch i := space(data, 0); {
	case i == len(data):
		return nil, &ParseError{Msg: "empty input"}
	case data[i] != '{':
		return nil, &ParseError{Offset: i, Msg: "a card must be a JSON object"}
	}
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	sc.unsafe = false
	canon, err := jcs.Append(sc.buf[:0], data, &sc.opts)
	sc.buf = canon
	if err != nil {
		return nil, parseError(err)
	}
	c := &Card{digest: sha256.Sum256(canon), unsafe: sc.unsafe, violations: validate(canon), raw: bytes.Clone(data)}
	if bytes.Equal(canon, data) {
		c.canon = c.raw
	}
	return c, nil
}

// scratch is what Parse reuses: the buffer it canonicalizes into, and
// its number check, made once (a closure per call would be an
// allocation per call).
type scratch struct {
	buf    []byte
	opts   jcs.Options
	unsafe bool // a number is not hash-safe
}

var scratches = sync.Pool{New: func() any { // its buffer is bounded, as Parse input is, by MaxSize
	sc := new(scratch)
	sc.opts.Number = func(lit []byte) error {
		sc.unsafe = sc.unsafe || !hashSafe(lit)
		return nil
	}
	return sc
}}

var utf8BOM = []byte("\xef\xbb\xbf")

// checkSize refuses data over MaxSize before it is read: every function
// that takes bytes calls it first (issue #34).
func checkSize(data []byte, what string) error {
	if len(data) <= MaxSize {
		return nil
	}
	return &ParseError{Msg: what + " of " + strconv.Itoa(len(data)) + " bytes exceeds the limit of " + strconv.Itoa(MaxSize), Err: ErrTooLarge}
}

// parseError turns an error of internal/jcs into a *ParseError.
func parseError(err error) error {
	var se *jcs.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	return &ParseError{Pointer: se.Pointer, Offset: se.Offset, Msg: se.Msg}
}

// canonical returns the card's RFC 8785 form, which the caller must not
// modify, and its index.
func (c *Card) canonical() ([]byte, index) {
	c.once.Do(func() {
		if c.canon == nil {
			c.canon, _ = jcs.Append(nil, c.raw, nil) // Parse accepted raw
		}
		c.big = indexOf(c.canon)
	})
	return c.canon, c.big
}

// size is the memory the card holds for its bytes, counting the
// canonical form a patch makes as held; 0 for nil. A Planner counts it.
func (c *Card) size() int {
	if c == nil {
		return 0
	}
	n := len(c.raw) + len(c.portrait)
	if cn, _ := c.canonical(); &cn[0] != &c.raw[0] {
		n += len(cn)
	}
	return n
}

// Bytes returns the card's JSON document as parsed. The caller must not
// modify it.
func (c *Card) Bytes() []byte { return c.raw }

// Hash returns the SHA-256 of the card's RFC 8785 canonical JSON, the
// engine's targetHash. Parse computes it, so it costs nothing. A card
// whose numbers the engine may canonicalize differently (see
// [Card.CheckNumbers]) still has a Hash; the engine may compute another.
func (c *Card) Hash() Digest { return c.digest }

// CheckNumbers reports whether the engine computes the card's Hash too: it
// returns nil when every number in the card canonicalizes the same in RFC
// 8785 and in the engine, else an *[UnsafeNumberError] naming the first
// number that may not (docs/rpengine-protocol.md, "Cards and hashes").
// Such a card is sent without targetHash and never patched.
func (c *Card) CheckNumbers() error {
	if !c.unsafe {
		return nil
	}
	var lit string
	_, err := jcs.Append(nil, c.raw, &jcs.Options{Number: func(l []byte) error {
		if hashSafe(l) {
			return nil
		}
		lit = string(l)
		return errUnsafe
	}})
	var se *jcs.SyntaxError
	if !errors.As(err, &se) {
		return nil
	}
	return &UnsafeNumberError{Pointer: se.Pointer, Literal: lit}
}

var errUnsafe = errors.New("hash-unsafe number")

// hashSafe reports whether a number literal prints the same in RFC 8785
// and in the engine: an integer of at most 2^53 in magnitude, written
// without fraction or exponent, and not negative zero.
func hashSafe(lit []byte) bool {
	const limit = "9007199254740992"
	d := bytes.TrimPrefix(lit, []byte{'-'})
	switch {
	case bytes.ContainsAny(d, ".eE"), len(d) < len(lit) && string(d) == "0":
		return false
	case len(d) != len(limit):
		return len(d) < len(limit)
	}
	return string(d) <= limit
}

// Name returns data.name, or "" when it is missing or not a string.
// Member names match exactly: "Name" or "DATA" are other members.
func (c *Card) Name() string {
	doc := c.raw
	var name string
	items(doc, space(doc, 0), func(root item) int {
		if text(doc, root.ks, root.ke) != "data" || doc[root.vs] != '{' {
			return 0
		}
		items(doc, root.vs, func(it item) int {
			if text(doc, it.ks, it.ke) == "name" && doc[it.vs] == '"' {
				name = text(doc, it.vs, skipString(doc, it.vs))
				return -1
			}
			return 0
		})
		return -1
	})
	return name
}

// AppendCanonical appends the RFC 8785 (JCS) canonical form of the JSON
// document src to dst and returns the extended buffer. It accepts any JSON
// value at the root and rejects what RFC 8785 rejects (duplicate keys,
// invalid UTF-8, lone surrogates, numbers beyond the IEEE-754 double range)
// with a *[ParseError], and a document over [MaxSize] before reading it
// with one that matches [ErrTooLarge]. src is not modified or retained.
func AppendCanonical(dst, src []byte) ([]byte, error) {
	if err := checkSize(src, "document"); err != nil {
		return dst, err
	}
	out, err := jcs.Append(dst, src, nil)
	if err != nil {
		return dst, parseError(err)
	}
	return out, nil
}
