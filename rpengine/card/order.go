package card

import "encoding/binary"

// orderCache remembers how the last few key sequences sort. Cards repeat
// the same object shape many times (every lorebook entry has its keys in
// the same source order), and checking that a sequence is the same costs
// n comparisons of equal keys, where sorting it costs about n²/4
// comparisons and moves.
type orderCache struct {
	e    [16]orderEntry
	next int
	hit  int         // the entry found last
	cur  *orderEntry // the entry being learned
	gen  uint32      // the generation of the entry remembered last
}

type orderEntry struct {
	keys   []byte      // the keys in source order, concatenated
	ends   []int       // end of each key in keys
	words  []uint64    // keyWord of each key
	starts []int       // source order start offsets (scratch for learn)
	perm   []int       // perm[j] = source index of the j-th key in sorted order
	checks shapeChecks // the card rules of the shape at one level (check.go), once known
	misses uint8       // objects of the shape predictedObject failed to take since it last took one

	// For predicting the keys of the next object (see canon.parse):
	// index in the cache, generation (a new one each time the entry is
	// remembered anew, so that a shapeRef to it goes stale), and each
	// key as the source writes it, "key": (nil when a key had escapes).
	index   int
	gen     uint32
	predict bool // quoted holds every key
	quoted  []quotedKey
	qbytes  []byte
}

// quotedKey is a key as "key": in the source, n bytes at qbytes[off:]:
// up to 24 of them are its words w[i] under the masks m[i] (zero past
// n). word is the key's keyWord, sorted the index of its member in the
// shape's sorted order.
type quotedKey struct {
	w, m   [3]uint64
	word   uint64
	off, n int
	sorted int
}

// at reports whether src[pos:] starts with k. The parser compares keys
// of up to 21 bytes (24 quoted) by their words itself.
func (k *quotedKey) at(src []byte, pos int, qbytes []byte) bool {
	return pos+k.n <= len(src) && string(src[pos:pos+k.n]) == string(qbytes[k.off:k.off+k.n])
}

const maxOrderKeys = 64 // larger objects are sorted each time

// maxOrderKeyBytes bounds the key bytes an entry keeps: the cache lives in
// pooled canonicalizers, and one object with megabyte keys must not stay
// pinned there. Such objects are sorted each time.
const maxOrderKeyBytes = 4 << 10

// find returns the entry whose keys are those of ms, in the same order,
// or nil. The entry found last is tried first: objects of one shape come
// in runs.
func (o *orderCache) find(c *canon, ms []member) *orderEntry {
	if e := &o.e[o.hit]; len(e.perm) == len(ms) && e.matches(c, ms) {
		return e
	}
	for i := range o.e {
		if e := &o.e[i]; len(e.perm) == len(ms) && e.matches(c, ms) {
			o.hit = i
			return e
		}
	}
	return nil
}

// matches compares keys by their words (member.kw) and lengths, and
// the bytes past the first 8 of longer keys.
func (e *orderEntry) matches(c *canon, ms []member) bool {
	words, ends := e.words[:len(ms)], e.ends[:len(ms)]
	prev := 0
	for i := range ms {
		m := &ms[i]
		n := ends[i] - prev
		if words[i] != m.kw || n != m.kb-m.ka {
			return false
		}
		if n > 8 && !equalTail(e.keys[prev:ends[i]], c.key(m)) {
			return false
		}
		prev = ends[i]
	}
	return true
}

// equalTail reports whether a and b, of equal lengths over 8 bytes and
// equal first 8 bytes, are equal. Up to 16 bytes that is their last
// words, compared inline where string(a) == string(b) calls memequal.
func equalTail(a, b []byte) bool {
	if n := len(a); n <= 16 {
		return binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
	}
	return string(a[8:]) == string(b[8:])
}

// remember records the source order of ms before it is sorted.
func (o *orderCache) remember(c *canon, ms []member) {
	o.cur = nil
	if len(ms) > maxOrderKeys {
		return
	}
	n := 0
	for i := range ms {
		n += len(c.key(&ms[i]))
	}
	if n > maxOrderKeyBytes {
		return
	}
	e := &o.e[o.next]
	e.index = o.next
	o.next = (o.next + 1) % len(o.e)
	o.gen++
	e.gen = o.gen
	e.keys, e.ends, e.starts, e.perm = e.keys[:0], e.ends[:0], e.starts[:0], e.perm[:0]
	e.checks.known, e.misses = false, 0
	e.words = e.words[:0]
	e.quoted, e.qbytes, e.predict = e.quoted[:0], e.qbytes[:0], true
	for i := range ms {
		k := c.key(&ms[i])
		e.keys = append(e.keys, k...)
		e.ends = append(e.ends, len(e.keys))
		e.words = append(e.words, ms[i].kw)
		e.starts = append(e.starts, ms[i].start)
		if ms[i].esc || len(k) > 250 {
			e.predict = false // the source's bytes are not the key's
		}
		if e.predict {
			off := len(e.qbytes)
			e.qbytes = append(append(append(e.qbytes, '"'), k...), '"', ':')
			q := e.qbytes[off:]
			k := quotedKey{word: ms[i].kw, off: off, n: len(q)}
			var p [24]byte
			copy(p[:], q)
			for j := range k.w {
				k.w[j] = binary.LittleEndian.Uint64(p[8*j:])
				switch n := len(q) - 8*j; {
				case n >= 8:
					k.m[j] = ^uint64(0)
				case n > 0:
					k.m[j] = 1<<(8*n) - 1
				}
			}
			e.quoted = append(e.quoted, k)
		}
	}
	o.cur = e
}

// learn records the sorted order; start offsets ascend in source order.
func (o *orderCache) learn(ms []member) {
	e := o.cur
	if e == nil {
		return
	}
	for j := range ms {
		lo, hi := 0, len(e.starts)
		for lo < hi {
			mid := (lo + hi) / 2
			if e.starts[mid] < ms[j].start {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		e.perm = append(e.perm, lo)
	}
	if e.predict {
		for j, i := range e.perm {
			e.quoted[i].sorted = j
		}
	}
	o.cur = nil
}

// forget drops the entry being learned (its keys had a duplicate).
func (o *orderCache) forget() {
	if o.cur != nil {
		o.cur.perm = o.cur.perm[:0]
		o.cur = nil
	}
}
