package bench

import (
	"testing"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// editedTypical returns the typical card and a copy with one field edited.
func editedTypical(tb testing.TB) (base, target *card.Card) {
	doc := Cards()[1].JSON
	base, err := card.Parse(doc)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := card.ApplyPatch(doc, []byte(`[{"op":"replace","path":"/data/scenario","value":"a night market by the river"}]`))
	if err != nil {
		tb.Fatal(err)
	}
	if target, err = card.Parse(out); err != nil {
		tb.Fatal(err)
	}
	return base, target
}

// BenchmarkPlan measures card.Planner.Plan for a one-field edit of the
// typical card against an accepted base: it decides between reference,
// patch and snapshot, diffs, and verifies the patch by applying it and
// hashing the result. The cold hash of the same card (BenchmarkHash) and
// the bytes saved (patch_B against snapshot_B) put it in proportion.
func BenchmarkPlan(b *testing.B) {
	base, target := editedTypical(b)
	key := card.Key{IntegrationID: "game", CharacterID: "ari"}
	b.Run("typical/one-field-edit", func(b *testing.B) {
		p := card.NewPlanner(nil)
		h := base.Hash()
		p.Accepted(key, base, h)
		b.SetBytes(int64(len(target.Bytes())))
		b.ReportAllocs()
		var tr card.Transfer
		cpu := startCPU()
		for b.Loop() {
			var err error
			if tr, err = p.Plan(key, target); err != nil || tr.Mode != card.ModePatch {
				b.Fatalf("%v %v", tr.Mode, err)
			}
		}
		cpu.report(b)
		b.ReportMetric(float64(len(tr.Patch)), "patch_B")
		b.ReportMetric(float64(len(target.Bytes())), "snapshot_B")
	})
	b.Run("typical/unchanged", func(b *testing.B) {
		p := card.NewPlanner(nil)
		h := base.Hash()
		p.Accepted(key, base, h)
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			if tr, err := p.Plan(key, base); err != nil || tr.Mode != card.ModeReference {
				b.Fatalf("%v %v", tr.Mode, err)
			}
		}
		cpu.report(b)
	})
}

// TestPlan_oneFieldEdit checks what BenchmarkPlan measures: a small
// verified patch that turns the base into the target.
func TestPlan_oneFieldEdit(t *testing.T) {
	t.Parallel()
	base, target := editedTypical(t)
	p := card.NewPlanner(nil)
	key := card.Key{IntegrationID: "game", CharacterID: "ari"}
	h := base.Hash()
	p.Accepted(key, base, h)
	tr, err := p.Plan(key, target)
	if err != nil || tr.Mode != card.ModePatch {
		t.Fatalf("plan: %v %v", tr.Mode, err)
	}
	if len(tr.Patch) > 200 {
		t.Errorf("patch of %d bytes for a one-field edit: %s", len(tr.Patch), tr.Patch)
	}
	out, err := card.ApplyPatch(base.Bytes(), tr.Patch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := card.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if gh := got.Hash(); tr.TargetHash == nil || gh != *tr.TargetHash {
		t.Errorf("patched hash %v, target %v", gh, tr.TargetHash)
	}
}
