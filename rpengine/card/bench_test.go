package card

import (
	"crypto/sha256"
	"testing"

	"github.com/gowebpki/jcs"
)

// benchCards: a small card (full.json, 2.6 KB) and a large one
// (lorebook-200.json, 97 KB).
var benchCards = []struct{ name, file string }{{"small", "full.json"}, {"large", "lorebook-200.json"}}

// BenchmarkHash compares, on the same input: the cold hash (one-pass
// canonicalization + SHA-256, what Parse does on a memo miss), Parse + Hash
// on a memo miss (adds the copy, xxh3 and the memo update), the memoized
// Parse + Hash of bytes seen before, and the reference, gowebpki/jcs.Transform
// + SHA-256.
func BenchmarkHash(b *testing.B) {
	for _, bc := range benchCards {
		data := readCard(b, bc.file)
		b.Run(bc.name+"/cold", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := hashDocument(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/parse-cold", func(b *testing.B) {
			key := memoKey(data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				memo.drop(key)
				c, err := Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = c.Hash()
			}
		})
		b.Run(bc.name+"/memoized", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = c.Hash()
			}
		})
		b.Run(bc.name+"/jcs", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := jcs.Transform(data)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(out)
			}
		})
	}
}

// BenchmarkPlan_oneFieldEdit measures Plan for a one-field edit against an
// accepted base: canonicalize the target, diff, verify by applying and
// hashing. Compare with BenchmarkHash/*/cold.
func BenchmarkPlan_oneFieldEdit(b *testing.B) {
	for _, bc := range benchCards {
		base, err := Parse(readCard(b, bc.file))
		if err != nil {
			b.Fatal(err)
		}
		out, err := ApplyPatch(base.Bytes(), []byte(`[{"op":"replace","path":"/data/description","value":"edited"}]`))
		if err != nil {
			b.Fatal(err)
		}
		target, err := Parse(out)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			p := NewPlanner(nil)
			d, _ := base.Hash()
			p.Accepted(keyA, base, d)
			b.SetBytes(int64(len(target.Bytes())))
			b.ReportAllocs()
			for b.Loop() {
				tr, err := p.Plan(keyA, target)
				if err != nil || tr.Mode != ModePatch {
					b.Fatalf("%v %v", tr.Mode, err)
				}
			}
		})
	}
}

// BenchmarkApplyPatch measures the validating evanphx wrapper.
func BenchmarkApplyPatch(b *testing.B) {
	data := readCard(b, "lorebook-200.json")
	patch := []byte(`[{"op":"replace","path":"/data/description","value":"edited"}]`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyPatch(data, patch); err != nil {
			b.Fatal(err)
		}
	}
}

// drop forgets one memo entry, so that a benchmark can measure a miss.
func (h *hashMemo) drop(k memoKey128) {
	h.mu.Lock()
	delete(h.m, k)
	h.mu.Unlock()
}
