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

// hashMemo is a bounded map with FIFO eviction, shared by all cards: an
// open-addressing table of twice as many slots as entries, indexed by
// the key's low bits (xxh3 spreads them), with linear probing and
// deletion by backward shift, so no tombstones build up. A Go map under
// the same churn (one delete and one insert per cold Parse) cost about a
// microsecond an operation, most of a small card's parse.
type hashMemo struct {
	mu    sync.Mutex // guards following
	slots []memoSlot
	ring  []memoKey128 // keys in insertion order, the oldest at next once full
	next  int
}

type memoSlot struct {
	key  memoKey128
	e    memoEntry
	used bool
}

const memoSlots = 2 * memoEntries // a power of two

var memo = &hashMemo{}

func memoKey(data []byte) memoKey128 { return xxh3.Hash128(data) }

func home(k memoKey128) int { return int(k.Lo & (memoSlots - 1)) }

// find returns the slot of k, or -1.
func (h *hashMemo) find(k memoKey128) int {
	if h.slots == nil {
		return -1
	}
	for i := home(k); ; i = (i + 1) & (memoSlots - 1) {
		switch s := &h.slots[i]; {
		case !s.used:
			return -1
		case s.key == k:
			return i
		}
	}
}

func (h *hashMemo) get(k memoKey128) (memoEntry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := h.find(k); i >= 0 {
		return h.slots[i].e, true
	}
	return memoEntry{}, false
}

func (h *hashMemo) put(k memoKey128, e memoEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slots == nil {
		h.slots = make([]memoSlot, memoSlots)
		h.ring = make([]memoKey128, 0, memoEntries)
	}
	if h.find(k) >= 0 {
		return
	}
	if len(h.ring) < memoEntries {
		h.ring = append(h.ring, k)
	} else {
		h.remove(h.ring[h.next])
		h.ring[h.next] = k
		h.next = (h.next + 1) % memoEntries
	}
	i := home(k)
	for h.slots[i].used {
		i = (i + 1) & (memoSlots - 1)
	}
	h.slots[i] = memoSlot{key: k, e: e, used: true}
}

// remove deletes k, moving back the entries after it that probed past
// its slot.
func (h *hashMemo) remove(k memoKey128) {
	i := h.find(k)
	if i < 0 {
		return
	}
	for j := (i + 1) & (memoSlots - 1); h.slots[j].used; j = (j + 1) & (memoSlots - 1) {
		// The entry at j may move to i unless its home lies cyclically
		// in (i, j].
		if hj := home(h.slots[j].key); (j-hj)&(memoSlots-1) >= (j-i)&(memoSlots-1) {
			h.slots[i] = h.slots[j]
			i = j
		}
	}
	h.slots[i] = memoSlot{}
}

// len returns the number of entries.
func (h *hashMemo) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ring)
}
