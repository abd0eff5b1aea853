package card

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/gowebpki/jcs"
)

// benchCards: a small card (full.json, 2.6 KB) and a large one
// (lorebook-200.json, 97 KB).
var benchCards = []struct{ name, file string }{{"small", "full.json"}, {"large", "lorebook-200.json"}}

// BenchmarkHash compares, on the same input, a cold Parse (copy,
// canonicalization, the V2 rules and SHA-256) with the reference,
// gowebpki/jcs.Transform + SHA-256. bench/ has the full comparison.
func BenchmarkHash(b *testing.B) {
	for _, bc := range benchCards {
		data := readCard(b, bc.file)
		b.Run(bc.name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
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

// BenchmarkApplyPatch measures a one-operation patch of a large card.
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
