package bench

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// scaleSizes are the n, 4n and 16n of the scaling benchmarks: every
// BenchmarkScale<Name> has sub-benchmarks n=<N> at these sizes, and
// bench/report prints t(16n)/t(n) for each (at most 20: linear, or n log
// n, with room for the caches).
var scaleSizes = []int{1000, 4000, 16000}

// scaleCard is a small card whose tags list holds n strings, each tags[i]
// or, when odd is set, a changed value at every odd index.
func scaleCard(tb testing.TB, n int, odd bool) *card.Card {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "tag" + strconv.Itoa(i)
		if odd && i%2 == 1 {
			tags[i] = "new" + strconv.Itoa(i)
		}
	}
	c, err := card.New(card.Data{Name: "Ari", Description: "A scout.", Tags: tags})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// scalePatch returns n operations on a card with no tags: inserts at the
// front and at the end of data.tags, new members of data.extensions (each
// in its sorted place) and replacements of tags already added, in turn.
func scalePatch(n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `{"op":"add","path":"/data/tags/0","value":"t%d"}`, i)
		case 1:
			fmt.Fprintf(&b, `{"op":"add","path":"/data/tags/-","value":"t%d"}`, i)
		case 2:
			fmt.Fprintf(&b, `{"op":"add","path":"/data/extensions/k%d","value":%d}`, (i*7919)%n, i)
		case 3:
			fmt.Fprintf(&b, `{"op":"replace","path":"/data/tags/%d","value":"r%d"}`, i/4, i)
		}
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// BenchmarkScaleCardApplyPatch: card.ApplyPatch of n operations
// (scalePatch) on a small card; patch_B is the patch's size.
func BenchmarkScaleCardApplyPatch(b *testing.B) {
	doc := scaleCard(b, 0, false).Bytes()
	for _, n := range scaleSizes {
		patch := scalePatch(n)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if _, err := card.ApplyPatch(doc, patch); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(len(patch)), "patch_B")
		})
	}
}

// BenchmarkScaleCardDiff: card.Diff of two cards whose tags lists of n
// strings differ at every other element (n/2 operations, verified).
func BenchmarkScaleCardDiff(b *testing.B) {
	for _, n := range scaleSizes {
		base, target := scaleCard(b, n, false), scaleCard(b, n, true)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			var p []byte
			for b.Loop() {
				var err error
				if p, err = card.Diff(base, target); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(len(p)), "patch_B")
		})
	}
}

// TestScaleCard checks what the scaling benchmarks measure: the patch
// applies, and Diff's patch is the n/2 replacements, not a replacement
// of the whole card.
func TestScaleCard(t *testing.T) {
	t.Parallel()
	const n = 1000
	out, err := card.ApplyPatch(scaleCard(t, 0, false).Bytes(), scalePatch(n))
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(out)
	if err != nil || c.Validate() != nil {
		t.Fatalf("%v %v", err, c.Validate())
	}
	base, target := scaleCard(t, n, false), scaleCard(t, n, true)
	p, err := card.Diff(base, target)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(p), `"op":"replace"`); got != n/2 {
		t.Fatalf("%d replacements, want %d: %.200s", got, n/2, p)
	}
	patched, err := card.ApplyPatch(base.Bytes(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := card.Parse(patched); got.Hash() != target.Hash() {
		t.Fatal("the patch does not give the target")
	}
}
