package card

import (
	"sync"

	"github.com/zeebo/xxh3"
)

// memoEntries bounds the hash memo: about 100 bytes an entry.
const memoEntries = 4096

// memoKey is a 128-bit xxh3 of a document's bytes. It is fast (many GB/s)
// and not cryptographic: cards come from the game itself, so collisions
// need not resist an attacker, and 128 bits make accidents negligible.
type memoKey128 = xxh3.Uint128

type memoEntry struct {
	digest Digest
	unsafe bool
	valid  bool // Validate found no violation
}

// hashMemo is a bounded map with FIFO eviction, shared by all cards.
type hashMemo struct {
	mu   sync.Mutex // guards following
	m    map[memoKey128]memoEntry
	ring []memoKey128
	next int
}

var memo = &hashMemo{}

func memoKey(data []byte) memoKey128 { return xxh3.Hash128(data) }

func (h *hashMemo) get(k memoKey128) (memoEntry, bool) {
	h.mu.Lock()
	e, ok := h.m[k]
	h.mu.Unlock()
	return e, ok
}

func (h *hashMemo) put(k memoKey128, e memoEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[memoKey128]memoEntry, memoEntries)
		h.ring = make([]memoKey128, 0, memoEntries)
	}
	if _, ok := h.m[k]; ok {
		return
	}
	if len(h.ring) < memoEntries {
		h.ring = append(h.ring, k)
	} else {
		delete(h.m, h.ring[h.next])
		h.ring[h.next] = k
		h.next = (h.next + 1) % memoEntries
	}
	h.m[k] = e
}
