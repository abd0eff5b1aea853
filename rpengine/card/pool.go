package card

import (
	"sync"
	"sync/atomic"
)

// A canonicalizer's scratch grows to the size of the largest card it has
// parsed (a 1 MB lorebook card: about 2 MB), and a sync.Pool forgets its
// objects after two garbage collections, which large cards trigger every
// few parses; each loss cost the next parse its growth again. One
// canonicalizer is therefore kept in a slot the collector leaves alone,
// and the pool holds the others.
var (
	canonSlot atomic.Pointer[canon]
	canonPool = sync.Pool{New: func() any { return new(canon) }}
)

// maxPooled caps the scratch a pooled canonicalizer keeps, so that one huge
// document does not pin memory for the life of the process: up to
// 4 MiB of output and of sorted members (a card of a few megabytes) and
// 1 MiB of each other slice.
const maxPooled = 1 << 20

// getCanon returns a canonicalizer for src from the pool.
func getCanon(src []byte) *canon {
	c := canonSlot.Swap(nil)
	if c == nil {
		c = canonPool.Get().(*canon)
	}
	c.src = src
	return c
}

// putCanon resets c and returns it to the pool, unless it holds more
// scratch than the pool keeps.
func putCanon(c *canon) {
	c.src, c.err, c.unsafeLit, c.res, c.shape = nil, nil, "", nil, nil
	c.pos, c.pend = 0, 0
	c.unsafe, c.moved, c.check, c.invalid, c.strArr, c.stopUnsafe = false, false, false, false, false, false
	c.out, c.buf, c.keys = c.out[:0], c.buf[:0], c.keys[:0]
	c.frames, c.members, c.sorted, c.recs, c.scratch = c.frames[:0], c.members[:0], c.sorted[:0], c.recs[:0], c.scratch[:0]
	c.ops, c.leafOps = c.ops[:0], c.leafOps[:0]
	const memberSize, pieceSize, recSize, opSize = 64, 24, 48, 8
	if cap(c.out) > 4*maxPooled || cap(c.buf) > 4*maxPooled || cap(c.keys) > maxPooled ||
		cap(c.members)*memberSize > maxPooled || cap(c.scratch)*memberSize > maxPooled ||
		cap(c.sorted)*pieceSize > 4*maxPooled || cap(c.recs)*recSize > maxPooled || cap(c.ops)*opSize > 4*maxPooled || cap(c.leafOps)*opSize > 4*maxPooled {
		return
	}
	if !canonSlot.CompareAndSwap(nil, c) {
		canonPool.Put(c)
	}
}
