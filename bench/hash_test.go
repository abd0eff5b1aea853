package bench

import (
	"crypto/sha256"
	"sync/atomic"
	"testing"

	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gowebpki/jcs"
)

// nonces numbers the cold parses of the process: every one of them,
// across -count runs and cards, is bytes never parsed before (card keeps
// no cache of parses since issue #30, and none can help).
var nonces atomic.Uint64

// BenchmarkHash measures the card hash (SHA-256 of the RFC 8785 form) on
// the three generated cards:
//
//   - cold: card.Parse of bytes it has never seen (the nonce digits change
//     every iteration): copy, canonicalization, the Character Card V2
//     rules on the canonical form, and SHA-256. One parse before the loop
//     grows the pooled scratch, a once-per-process cost; card_B is the
//     card's size, to which the report holds B/op;
//   - hash: Card.Hash of a parsed card (the digest is kept);
//   - jcs: the reference, gowebpki/jcs.Transform then sha256.Sum256;
//   - sha256: SHA-256 alone over the canonical bytes, the floor.
//
// bench/run adds node: Node.js, npm canonicalize and crypto SHA-256.
func BenchmarkHash(b *testing.B) {
	for _, c := range Cards() {
		canon, err := jcs.Transform(c.JSON)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name+"/cold", func(b *testing.B) {
			doc := append([]byte(nil), c.JSON...)
			at := NonceAt(doc)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			SetNonce(doc, at, nonces.Add(1))
			if _, err := card.Parse(doc); err != nil { // grow the pooled scratch once, outside the loop
				b.Fatal(err)
			}
			cpu := startCPU()
			for b.Loop() {
				SetNonce(doc, at, nonces.Add(1))
				if _, err := card.Parse(doc); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(len(doc)), "card_B")
		})
		b.Run(c.Name+"/hash", func(b *testing.B) {
			p, err := card.Parse(c.JSON)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var sink card.Digest
			cpu := startCPU()
			for b.Loop() {
				sink = p.Hash()
			}
			cpu.report(b)
			_ = sink
		})
		b.Run(c.Name+"/jcs", func(b *testing.B) {
			b.SetBytes(int64(len(c.JSON)))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				out, err := jcs.Transform(c.JSON)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(out)
			}
			cpu.report(b)
		})
		b.Run(c.Name+"/sha256", func(b *testing.B) {
			b.SetBytes(int64(len(c.JSON)))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				_ = sha256.Sum256(canon)
			}
			cpu.report(b)
		})
	}
}

// TestCards checks the generated cards: the sizes the benchmarks claim,
// valid Character Card V2, hash-safe, and the same hash from card.Parse
// and from jcs.Transform + SHA-256 (so the benchmarks compare equals).
func TestCards(t *testing.T) {
	t.Parallel()
	want := map[string][2]int{"small": {1500, 3000}, "typical": {8000, 14000}, "large": {900_000, 1_300_000}}
	for _, c := range Cards() {
		if r := want[c.Name]; len(c.JSON) < r[0] || len(c.JSON) > r[1] {
			t.Errorf("%s: %d bytes, want %d..%d", c.Name, len(c.JSON), r[0], r[1])
		}
		p, err := card.Parse(c.JSON)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if err := p.CheckNumbers(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		canon, err := jcs.Transform(c.JSON)
		if err != nil {
			t.Fatal(err)
		}
		if h := p.Hash(); h != card.Digest(sha256.Sum256(canon)) {
			t.Errorf("%s: card.Parse and jcs disagree", c.Name)
		}
		doc := append([]byte(nil), c.JSON...)
		SetNonce(doc, NonceAt(doc), 42)
		q, err := card.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		if h1 := p.Hash(); func() bool { h2 := q.Hash(); return h1 == h2 }() {
			t.Errorf("%s: a new nonce did not change the hash", c.Name)
		}
	}
}
