package card

import (
	"sync"

	"github.com/zeebo/xxh3"
)

// memoEntries bounds the hash memo: 64 bytes an entry.
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

// hashMemo is a bounded cache shared by all cards: a table of sets of
// memoWays entries, the set of a key chosen by its low bits (xxh3
// spreads them), each set replacing its oldest entry when a new key
// comes to it when it is full. A cold Parse looks its key up (a miss)
// and adds it: with the keys of a set in one cache line, that touches
// the line and the replaced entry. An open-addressing table with FIFO
// eviction over the whole memo, as before, touched the probed slots, the
// ring of keys and the slots of the evicted key and of those shifted back
// after it, most of them cache misses; and a Go map under the same churn
// cost about a microsecond an operation, most of a small card's parse.
// Eviction is oldest first within a set, not over the whole memo: a key
// stays until memoWays newer keys have come to its set.
type hashMemo struct {
	mu   sync.Mutex // guards following
	sets []memoSet
	n    int // entries
}

// memoWays is the entries of a set: the keys of four fill a cache line.
const memoWays = 4

// memoSets is the sets of the table, a power of two.
const memoSets = memoEntries / memoWays

// memoSet holds up to memoWays entries: ways [0, used), oldest at next
// once full. It takes 256 bytes, so that in the table (one allocation
// of 256 KiB, which the runtime starts on a page) the keys of each set are
// one cache line.
type memoSet struct {
	keys [memoWays]memoKey128
	ents [memoWays]memoEntry
	used uint8
	next uint8
	_    [256 - memoWays*(16+34) - 2]byte
}

var memo = &hashMemo{}

func memoKey(data []byte) memoKey128 { return xxh3.Hash128(data) }

func (h *hashMemo) set(k memoKey128) *memoSet {
	if h.sets == nil {
		h.sets = make([]memoSet, memoSets)
	}
	return &h.sets[k.Lo&(memoSets-1)]
}

// find returns the way of k in s, or -1.
func (s *memoSet) find(k memoKey128) int {
	for i := range s.keys[:s.used] {
		if s.keys[i] == k {
			return i
		}
	}
	return -1
}

func (h *hashMemo) get(k memoKey128) (memoEntry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(k)
	if i := s.find(k); i >= 0 {
		return s.ents[i], true
	}
	return memoEntry{}, false
}

func (h *hashMemo) put(k memoKey128, e memoEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(k)
	if s.find(k) >= 0 {
		return
	}
	i := int(s.used)
	if i < memoWays {
		s.used++
		h.n++
	} else {
		i = int(s.next)
		s.next = (s.next + 1) % memoWays
	}
	s.keys[i], s.ents[i] = k, e
}

// remove deletes k, keeping the order of the rest of its set.
func (h *hashMemo) remove(k memoKey128) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(k)
	i := s.find(k)
	if i < 0 {
		return
	}
	old := *s
	s.used, s.next = 0, 0
	for j := range int(old.used) {
		if w := (int(old.next) + j) % memoWays; w != i {
			s.keys[s.used], s.ents[s.used] = old.keys[w], old.ents[w]
			s.used++
		}
	}
	h.n--
}

// len returns the number of entries.
func (h *hashMemo) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
