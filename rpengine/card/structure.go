package card

import "math/bits"

// The structure of a canonical document a block of 64 bytes at a time,
// for the scans of the differ and the patch applier: which containers
// are open at an offset (prefixPath) and where one ends (skipValue). In
// the way of simdjson's first stage: masks of quotes, backslashes,
// brackets and commas from a vector compare (scan_amd64.s), then, in
// integer arithmetic, the escaped bytes (after an odd run of
// backslashes), the bytes inside strings (a prefix XOR of the unescaped
// quotes) and the structural bytes outside them. The scans start outside
// a string: the state carried from block to block starts empty.

// jsonBlock holds the masks of one 64-byte block, bit j for byte j.
type jsonBlock struct{ quote, bslash, open, close, comma uint64 }

// jsonBlocksGeneric is jsonBlocks a byte at a time.
func jsonBlocksGeneric(p []byte, out []jsonBlock) int {
	n := min(len(p)/64, len(out))
	for k := range n {
		var b jsonBlock
		for j, c := range p[64*k : 64*k+64] {
			bit := uint64(1) << j
			switch c {
			case '"':
				b.quote |= bit
			case '\\':
				b.bslash |= bit
			case '{', '[':
				b.open |= bit
			case '}', ']':
				b.close |= bit
			case ',':
				b.comma |= bit
			}
		}
		out[k] = b
	}
	return n
}

// structState is what a scan carries from one block to the next.
type structState struct {
	esc   uint64 // 1: the block before ended with an odd run of backslashes
	inStr uint64 // all ones: it ended inside a string
}

// structural returns the masks of b's brackets and commas outside
// strings, and carries the state to the next block.
func (s *structState) structural(b *jsonBlock) (open, close, comma uint64) {
	const even = 0x5555555555555555
	bs := b.bslash &^ s.esc
	follows := bs<<1 | s.esc
	odd := bs &^ even &^ follows
	seq, carry := bits.Add64(odd, bs, 0)
	escaped := (even ^ seq<<1) & follows
	s.esc = carry
	q := b.quote &^ escaped
	q ^= q << 1
	q ^= q << 2
	q ^= q << 4
	q ^= q << 8
	q ^= q << 16
	q ^= q << 32
	str := q ^ s.inStr // from an opening quote up to its closing one
	s.inStr = uint64(int64(str) >> 63)
	return b.open &^ str, b.close &^ str, b.comma &^ str
}

// blockScan reads the blocks of doc[from:] in batches.
type blockScan struct {
	doc  []byte
	at   int // doc offset of the next block to read
	st   structState
	buf  [16]jsonBlock
	tail [64]byte
}

// next returns the blocks of the next batch and the doc offset of the
// first, or none at the end of doc. The last, partial block is read
// padded with spaces.
func (b *blockScan) next() ([]jsonBlock, int) {
	at := b.at
	if at >= len(b.doc) {
		return nil, at
	}
	if n := jsonBlocks(b.doc[at:], b.buf[:]); n > 0 {
		b.at += 64 * n
		return b.buf[:n], at
	}
	for i := range b.tail {
		b.tail[i] = ' '
	}
	copy(b.tail[:], b.doc[at:])
	jsonBlocks(b.tail[:], b.buf[:1])
	b.at = len(b.doc)
	return b.buf[:1], at
}

// skipContainerFast returns the end of the container whose opening
// bracket is doc[i], or len(doc) when it does not close.
func skipContainerFast(doc []byte, i int) int {
	return closeAt(doc, i+1, 1)
}

// closeAt returns the end of the container that depth closing brackets
// from doc[i] (outside a string) close.
func closeAt(doc []byte, i, depth int) int {
	sc := blockScan{doc: doc, at: i}
	for {
		blocks, at := sc.next()
		if blocks == nil {
			return len(doc)
		}
		for k := range blocks {
			open, close, _ := sc.st.structural(&blocks[k])
			// Skip a block that cannot close the container.
			if bits.OnesCount64(close) < depth {
				depth += bits.OnesCount64(open) - bits.OnesCount64(close)
				continue
			}
			for m := open | close; m != 0; m &= m - 1 {
				bit := m & -m
				if open&bit != 0 {
					depth++
				} else if depth--; depth == 0 {
					return at + 64*k + bits.TrailingZeros64(m) + 1
				}
			}
		}
	}
}

// prefixPathFast is prefixPath a block at a time.
func prefixPathFast(doc []byte, pre int, out []prefixEntry) []prefixEntry {
	sc := blockScan{doc: doc[:pre]}
	for {
		blocks, at := sc.next()
		if blocks == nil {
			return out
		}
		for k := range blocks {
			open, close, comma := sc.st.structural(&blocks[k])
			base := at + 64*k
			for m := open | close | comma; m != 0; m &= m - 1 {
				j := bits.TrailingZeros64(m)
				i := base + j
				switch bit := uint64(1) << j; {
				case open&bit != 0:
					out = append(out, prefixEntry{start: i, child: i + 1})
				case close&bit != 0:
					out = out[:len(out)-1]
				default:
					e := &out[len(out)-1]
					e.child, e.index = i+1, e.index+1
				}
			}
		}
	}
}
