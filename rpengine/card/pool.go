package card

import "sync"

var canonPool = sync.Pool{New: func() any { return new(canon) }}

// maxPooled caps the scratch a pooled canonicalizer keeps, so that one huge
// document does not pin memory for the life of the process.
const maxPooled = 1 << 20

func getCanon(src, dst []byte) *canon {
	c := canonPool.Get().(*canon)
	c.src, c.out, c.pos, c.depth, c.unsafe, c.err = src, dst, 0, 0, false, nil
	c.stopUnsafe, c.unsafeLit = false, ""
	return c
}

func putCanon(c *canon) {
	c.src, c.out, c.err = nil, nil, nil
	c.members, c.keys, c.tmp, c.path = c.members[:0], c.keys[:0], c.tmp[:0], c.path[:0]
	if cap(c.buf) > 4*maxPooled || cap(c.tmp) > maxPooled || cap(c.keys) > maxPooled || cap(c.members) > maxPooled/32 {
		return
	}
	canonPool.Put(c)
}
