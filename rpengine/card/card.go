package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MaxSize is the largest document Parse accepts: the protocol's message
// limit, 8 MiB.
const MaxSize = 8 << 20

// Card is a parsed card that keeps every byte of meaning of its input:
// unknown fields, extension data and the source's key order are kept,
// because the card is kept as the document it was parsed from.
//
// A Card is immutable; all its methods may be called concurrently. Make
// one with [Parse] or [Repair]: the zero Card is not a valid card.
type Card struct {
	raw    []byte
	digest Digest
	unsafe bool // holds a number the engine may canonicalize differently
	valid  bool // no violation of the V2 rules

	// canon is the RFC 8785 form when Parse kept it (the same array as
	// raw when raw is canonical), else nil and the form is computed on
	// first use: from raw by the copies ops when raw is canonical up to
	// member order (see cardBytes), or by canonicalizing raw when Parse
	// found the card in the hash memo.
	canon []byte
	ops   []gatherOp

	later atomic.Pointer[cardLater]
}

// cardLater is what a card computes on first use, made then: most cards
// never need any of it, and with it in Card every cold Parse allocated
// a card of 256 bytes instead of 128 (issue #24).
type cardLater struct {
	formOnce sync.Once
	form     []byte

	validOnce  sync.Once
	violations []Violation

	nameOnce sync.Once
	name     string
}

// computed returns c's cardLater, making it on first use.
func (c *Card) computed() *cardLater {
	if l := c.later.Load(); l != nil {
		return l
	}
	c.later.CompareAndSwap(nil, new(cardLater))
	return c.later.Load()
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
// The result is memoized by an xxh3 hash of data in a bounded cache, so
// parsing bytes seen before costs little more than the copy.
func Parse(data []byte) (*Card, error) {
	if len(data) > MaxSize {
		return nil, &ParseError{Msg: "document of " + strconv.Itoa(len(data)) + " bytes exceeds the limit of " + strconv.Itoa(MaxSize), Err: ErrTooLarge}
	}
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, &ParseError{Msg: "the document starts with a UTF-8 byte order mark, which JSON text must not have (Repair removes it)"}
	}
	if !rootIsObject(data) {
		return nil, &ParseError{Msg: "a card must be a JSON object"}
	}
	key := memoKey(data)
	if e, ok := memo.get(key); ok {
		c := &Card{raw: append([]byte(nil), data...)}
		c.digest, c.unsafe, c.valid = e.digest, e.unsafe, e.valid
		return c, nil
	}
	return parseCold(data, key)
}

var utf8BOM = []byte("\xef\xbb\xbf")

func rootIsObject(data []byte) bool {
	for _, b := range data {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b == '{'
	}
	return false
}

// parseCold canonicalizes data, checking the V2 rules on the way, keeps
// the copy of data and its canonical form in one allocation, and hashes
// the canonical form.
func parseCold(data []byte, key memoKey128) (*Card, error) {
	cn := getCanon(data)
	defer putCanon(cn)
	cn.check = true
	if err := cn.run(); err != nil {
		return nil, err
	}
	c := &Card{unsafe: cn.unsafe, valid: !cn.invalid}
	var canon []byte
	c.raw, c.canon, c.ops, canon = cardBytes(data, cn)
	c.digest = sha256.Sum256(canon)
	if !c.valid {
		violations := validateCanonical(canon)
		l := c.computed()
		l.validOnce.Do(func() { l.violations = violations })
	}
	memo.put(key, memoEntry{digest: c.digest, unsafe: c.unsafe, valid: c.valid})
	return c, nil
}

// cardBytes returns what the card keeps of data and of its canonical form
// from cn's first pass, and the canonical form to hash now:
//
//   - data is canonical: a copy of it, which is both;
//   - data is canonical up to member order (compact JSON with keys out of
//     order, as most exporters write): a copy of data and the copies that
//     permute it into the canonical form, about a fifth of its size, which
//     [Card.canonical] follows when a patch needs the form. The form to
//     hash is gathered in cn's pooled scratch. Keeping the form too made a
//     card twice its size (issue #24);
//   - otherwise: a copy of data and the canonical form, in one array of
//     exactly their size, allocated without zeroing (bytes.Join does not
//     zero what it copies over; make would, and append would round the
//     capacity up by a quarter).
func cardBytes(data []byte, cn *canon) (raw, canon []byte, ops []gatherOp, hashed []byte) {
	n := len(data)
	if cn.same() {
		if !cn.moved {
			raw = append([]byte(nil), data...)
			raw = raw[:n:n]
			return raw, raw, nil, raw
		}
		// The copies are gathered in the pooled scratch, then kept after
		// the copy of data in one array of exactly their size: an array
		// of their own, sized by a bound before gathering (37 copies for
		// the 21 of a small card), cost one allocation more and more
		// bytes than they are, and the bytes a parse allocates are what
		// its share of the collector's work grows with (issue #24). The
		// copies hold no pointers, so the array stays one the collector
		// need not scan.
		cn.ops, _ = cn.gather(cn.ops[:0], 0, len(cn.res), 0)
		cn.buf = appendGathered(cn.buf[:0], cn.res, cn.ops)
		pad := opsPad(n)
		buf := bytes.Join([][]byte{data, opsAlign[:pad], opsBytes(cn.ops)}, nil)
		ops = unsafe.Slice((*gatherOp)(unsafe.Pointer(&buf[n+pad])), len(cn.ops))
		return buf[:n:n], nil, ops, cn.buf
	}
	res := cn.res
	if cn.moved {
		cn.buf = cn.appendTo(cn.buf[:0])
		res = cn.buf
	}
	m := len(res)
	buf := bytes.Join([][]byte{data, res}, nil)
	return buf[:n:n], buf[n : n+m : n+m], nil, buf[n : n+m : n+m]
}

// opsAlign pads a card's bytes up to the alignment of the copies kept
// after them.
var opsAlign [unsafe.Alignof(gatherOp{})]byte

// opsPad returns the padding between n bytes and the copies after them.
func opsPad(n int) int { return -n & (len(opsAlign) - 1) }

// opsBytes returns the memory of ops as bytes.
func opsBytes(ops []gatherOp) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ops))), len(ops)*int(unsafe.Sizeof(gatherOp{})))
}

// canonical returns the card's RFC 8785 form. The caller must not modify
// it.
func (c *Card) canonical() []byte {
	if c.canon != nil {
		return c.canon
	}
	l := c.computed()
	l.formOnce.Do(func() {
		if c.ops != nil {
			l.form = appendGathered(nil, c.raw, c.ops)
			return
		}
		// Parse accepted c.raw, so it canonicalizes.
		l.form, _ = AppendCanonical(nil, c.raw)
	})
	return l.form
}

// size is the memory the card holds for its bytes, counting the canonical
// form a patch builds from ops as held.
func (c *Card) size() int {
	n := len(c.raw)
	if c.ops != nil {
		return 2*n + opsPad(n) + len(opsBytes(c.ops))
	}
	if cn := c.canonical(); len(cn) > 0 && &cn[0] != &c.raw[0] {
		n += len(cn)
	}
	return n
}

// hashDocument canonicalizes data and returns its SHA-256 and whether it
// holds a hash-unsafe number.
func hashDocument(data []byte) (Digest, bool, error) {
	c := getCanon(data)
	defer putCanon(c)
	if err := c.run(); err != nil {
		return Digest{}, false, err
	}
	canon := c.res
	if c.moved {
		c.buf = c.appendTo(c.buf[:0])
		canon = c.buf
	}
	return sha256.Sum256(canon), c.unsafe, nil
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
	return firstUnsafe(c.raw)
}

// firstUnsafe walks data and reports its first hash-unsafe number.
func firstUnsafe(data []byte) error {
	c := getCanon(data)
	defer putCanon(c)
	c.stopUnsafe = true
	_ = c.run()
	if c.err == nil {
		return nil
	}
	return &UnsafeNumberError{Pointer: c.err.Pointer, Literal: c.unsafeLit}
}

// Name returns data.name, or "" when it is missing or not a string.
// Member names match exactly: "Name" or "DATA" are other members.
func (c *Card) Name() string {
	l := c.computed()
	l.nameOnce.Do(func() {
		// Maps, not a struct: encoding/json matches struct fields case
		// insensitively, so a struct would read "NAME" as name.
		var root, data map[string]json.RawMessage
		if json.Unmarshal(c.raw, &root) == nil && json.Unmarshal(root["data"], &data) == nil {
			_ = json.Unmarshal(data["name"], &l.name)
		}
	})
	return l.name
}
