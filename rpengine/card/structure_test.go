package card

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// randomJSON writes a random JSON value: nested objects and arrays, and
// strings full of the bytes that matter to a scan (quotes, runs of
// backslashes, brackets and commas inside strings).
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	switch k := r.IntN(10); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote("k" + strconv.Itoa(i) + strings.Repeat("\\", r.IntN(3))))
			b.WriteByte(':')
			randomJSON(r, b, depth-1)
		}
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth-1)
		}
		b.WriteByte(']')
	case k < 8:
		pieces := []string{`\\`, `\"`, `\\\"`, `\\\\`, "{", "}", "[", "]", ",", "é", "x", strings.Repeat("y", 40)}
		b.WriteByte('"')
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(4) == 0 {
			b.WriteString(`\\`) // a string that ends in a backslash
		}
		b.WriteByte('"')
	default:
		b.WriteString(strconv.Itoa(r.IntN(1000)))
	}
}

func randomCanonical(t *testing.T, r *rand.Rand) []byte {
	var b strings.Builder
	b.WriteString(`{"a":`)
	randomJSON(r, &b, 6)
	b.WriteString(`,"b":[`)
	randomJSON(r, &b, 6)
	b.WriteString(`]}`)
	doc, err := AppendCanonical(nil, []byte(b.String()))
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	return doc
}

// TestJSONBlocks checks the vector masks (AVX2 on amd64) against the
// byte loop on random bytes.
func TestJSONBlocks(t *testing.T) {
	t.Parallel()
	seed := uint64(6464)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	alphabet := []byte(`"\{}[],:a é` + "\x00\xff\x5b\x7b\x5d\x7d\x3c\x7c")
	for range 500 {
		p := make([]byte, r.IntN(2000))
		for i := range p {
			p[i] = alphabet[r.IntN(len(alphabet))]
		}
		got, want := make([]jsonBlock, 40), make([]jsonBlock, 40)
		n, m := jsonBlocks(p, got), jsonBlocksGeneric(p, want)
		if n != m || !slices.Equal(got, want) {
			t.Fatalf("%q: %d blocks %v, want %d %v", p, n, got, m, want)
		}
	}
}

// TestStructure checks the block scans of structure.go against the
// token-at-a-time ones: where every container of random canonical
// documents ends, and which containers are open at every offset.
// Issue #24 (Plan scanned the card's lorebook twice a token at a time).
func TestStructure(t *testing.T) {
	t.Parallel()
	seed := uint64(4646)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for range 300 {
		doc := randomCanonical(t, r)
		for i, c := range doc {
			if c != '{' && c != '[' {
				continue
			}
			// Outside strings only: the scalar scan tells which.
			if prefixOpen(doc, i) {
				if got, want := skipContainerFast(doc, i), skipValueGeneric(doc, i); got != want {
					t.Fatalf("%s: container at %d ends at %d, want %d", doc, i, got, want)
				}
			}
		}
		for pre := 0; pre <= len(doc); pre += 1 + r.IntN(7) {
			got, want := prefixPathFast(doc, pre, nil), prefixPathGeneric(doc, pre, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: path at %d %v, want %v", doc, pre, got, want)
			}
		}
	}
}

// prefixOpen reports whether doc[i] is a bracket outside strings.
func prefixOpen(doc []byte, i int) bool {
	p := prefixPathGeneric(doc, i+1, nil)
	return len(p) > 0 && p[len(p)-1].start == i
}

// skipValueGeneric is skipValue without the block scan.
func skipValueGeneric(doc []byte, i int) int {
	depth := 0
	for i < len(doc) {
		switch doc[i] {
		case '"':
			i = skipString(doc, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}
