package session

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// Issue #15: file mode's reply.audio.completed is checked against the
// whole segments as the engine computes its totals.
func Test_segmentTotals(t *testing.T) {
	t.Parallel()
	seg := func(i, samples int) stream.Segment {
		return stream.Segment{Index: i, SampleRate: 44100, Samples: make([]int16, samples)}
	}
	// 22050 samples = 44100 bytes = 2 chunks; 16384 samples = 1 chunk.
	two := []stream.Segment{seg(0, 22050), seg(1, 16384)}
	exact := wire.AudioCompleted{SegmentCount: 2, TotalBytes: 44100 + 32768, ChunkCount: 3, DurationSeconds: (22050.0 + 16384) / 44100}
	tests := []struct {
		name  string
		segs  []stream.Segment
		final wire.AudioCompleted
		want  []stream.AnomalyKind
		seqs  []int // Sequences of a missing_segments anomaly
	}{
		{"as the engine computes them", two, exact, nil, nil},
		{"repeated segment counted once", append(two, seg(1, 16384)), exact, nil, nil},
		{"nothing spoken", nil, wire.AudioCompleted{}, nil, nil},
		{"segment lost", two[:1], exact, []stream.AnomalyKind{stream.AnomalyTotalsMismatch, stream.AnomalyTotalsMismatch,
			stream.AnomalyTotalsMismatch, stream.AnomalyTotalsMismatch, stream.AnomalyMissingSegments}, []int{1}},
		{"gap below the highest", []stream.Segment{seg(2, 10)}, wire.AudioCompleted{SegmentCount: 1, TotalBytes: 20, ChunkCount: 1, DurationSeconds: 10.0 / 44100},
			[]stream.AnomalyKind{stream.AnomalyMissingSegments}, []int{0, 1}},
		{"duration off by more than 1 ms", two, func() wire.AudioCompleted { e := exact; e.DurationSeconds += 0.002; return e }(),
			[]stream.AnomalyKind{stream.AnomalyTotalsMismatch}, nil},
		{"duration within 1 ms", two, func() wire.AudioCompleted { e := exact; e.DurationSeconds += 0.0005; return e }(), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var st segmentTotals
			for _, s := range tt.segs {
				st.add(s)
			}
			got := st.check(&tt.final)
			var kinds []stream.AnomalyKind
			for _, an := range got {
				kinds = append(kinds, an.Kind)
				if an.Kind == stream.AnomalyMissingSegments {
					testutil.Equal(t, "missing", an.Sequences, tt.seqs)
				}
			}
			testutil.Equal(t, "anomalies", kinds, tt.want)
		})
	}
}
