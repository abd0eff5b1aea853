package card

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

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
				_ = c.Hash()
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
				_ = c.Hash()
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
// hashing. Compare with BenchmarkHash/*/cold (the base card, formatted the
// same way).
func BenchmarkPlan_oneFieldEdit(b *testing.B) {
	for _, bc := range benchCards {
		b.Run(bc.name, func(b *testing.B) {
			p, target := planFixture(b, bc.file)
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
func (h *hashMemo) drop(k memoKey128) { h.remove(k) }

// BenchmarkHash_vsJCS interleaves the cold hash and jcs.Transform + SHA-256
// iteration by iteration, timing each with benchClock (on Linux this
// thread's CPU time, so that the load of the shared CI machines does not
// skew the ratio), and reports the speed-up as x-faster.
func BenchmarkHash_vsJCS(b *testing.B) {
	for _, bc := range benchCards {
		data := readCard(b, bc.file)
		b.Run(bc.name, func(b *testing.B) {
			defer lockThread()()
			var ours, ref time.Duration
			for b.Loop() {
				t0 := benchClock()
				if _, _, err := hashDocument(data); err != nil {
					b.Fatal(err)
				}
				t1 := benchClock()
				out, err := jcs.Transform(data)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(out)
				t2 := benchClock()
				ours += t1 - t0
				ref += t2 - t1
			}
			b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ours-ns/op")
			b.ReportMetric(float64(ref.Nanoseconds())/float64(b.N), "jcs-ns/op")
			b.ReportMetric(float64(ref)/float64(ours), "x-faster")
		})
	}
}

// BenchmarkPlan_vsColdHash interleaves Plan of a one-field edit (target:
// within 3x of a cold hash) with the cold hash of the same card, timed
// with benchClock, and reports the ratio as x-cold.
func BenchmarkPlan_vsColdHash(b *testing.B) {
	for _, bc := range benchCards {
		b.Run(bc.name, func(b *testing.B) {
			p, target := planFixture(b, bc.file)
			defer lockThread()()
			var plan, cold time.Duration
			for b.Loop() {
				t0 := benchClock()
				if tr, err := p.Plan(keyA, target); err != nil || tr.Mode != ModePatch {
					b.Fatalf("%v %v", tr.Mode, err)
				}
				t1 := benchClock()
				if _, _, err := hashDocument(target.Bytes()); err != nil {
					b.Fatal(err)
				}
				t2 := benchClock()
				plan += t1 - t0
				cold += t2 - t1
			}
			b.ReportMetric(float64(plan.Nanoseconds())/float64(b.N), "plan-ns/op")
			b.ReportMetric(float64(cold.Nanoseconds())/float64(b.N), "cold-ns/op")
			b.ReportMetric(float64(plan)/float64(cold), "x-cold")
		})
	}
}

// planFixture returns a planner whose engine holds the card in file under
// keyA, and that card with a one-field edit.
func planFixture(b *testing.B, file string) (*Planner, *Card) {
	base, err := Parse(readCard(b, file))
	if err != nil {
		b.Fatal(err)
	}
	target, err := Parse(editDescription(b, base.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	p := NewPlanner(nil)
	d := base.Hash()
	p.Accepted(keyA, base, d)
	return p, target
}

// editDescription changes data.description in the source text, keeping the
// document's own formatting and key order, as a game regenerating its card
// would; the first "description" key of the test cards is data's.
func editDescription(tb testing.TB, doc []byte) []byte {
	i := bytes.Index(doc, []byte(`"description": "`))
	if i < 0 {
		tb.Fatal("no description")
	}
	i += len(`"description": "`)
	j := i + bytes.IndexByte(doc[i:], '"')
	out := append(append(append([]byte(nil), doc[:i]...), "edited"...), doc[j:]...)
	return out
}
