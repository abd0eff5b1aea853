package card

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
}

type orderEntry struct {
	keys   []byte  // the keys in source order, concatenated
	ends   []int   // end of each key in keys
	starts []int   // source order start offsets (scratch for learn)
	perm   []int   // perm[j] = source index of the j-th key in sorted order
	fields []uint8 // the keys' fields for the card rules (check.go), once known
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

func (e *orderEntry) matches(c *canon, ms []member) bool {
	prev := 0
	for i := range ms {
		if string(e.keys[prev:e.ends[i]]) != string(c.key(&ms[i])) {
			return false
		}
		prev = e.ends[i]
	}
	return true
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
	o.next = (o.next + 1) % len(o.e)
	e.keys, e.ends, e.starts, e.perm, e.fields = e.keys[:0], e.ends[:0], e.starts[:0], e.perm[:0], e.fields[:0]
	for i := range ms {
		e.keys = append(e.keys, c.key(&ms[i])...)
		e.ends = append(e.ends, len(e.keys))
		e.starts = append(e.starts, ms[i].start)
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
	o.cur = nil
}

// forget drops the entry being learned (its keys had a duplicate).
func (o *orderCache) forget() {
	if o.cur != nil {
		o.cur.perm = o.cur.perm[:0]
		o.cur = nil
	}
}
