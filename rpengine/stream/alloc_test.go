package stream_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// chunkEvents returns count in-order chunks of one segment, each of
// samples samples.
func chunkEvents(seg, firstSeq, count, samples int) []*stream.AudioChunk {
	data := make([]int16, samples)
	for i := range data {
		data[i] = int16(i * 7)
	}
	enc := pcm(data...)
	evs := make([]*stream.AudioChunk, count)
	for i := range evs {
		evs[i] = rawChunk(firstSeq+i, seg, i, count, enc)
	}
	return evs
}

// TestAssembler_PushAllocs pins zero allocations per in-order chunk in
// steady state: after the first chunk of a segment sized its buffers,
// pushing the next chunks and polling Next allocates nothing.
func TestAssembler_PushAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	const runs = 400
	evs := chunkEvents(0, 0, runs+3, 1024) // AllocsPerRun runs once more to warm up
	a := stream.NewAssembler(nil)
	a.Push(start())
	a.Push(evs[0]) // first use of the segment: sizes its buffers
	i := 1
	allocs := testing.AllocsPerRun(runs, func() {
		a.Push(evs[i])
		i++
		if _, ok := a.Next(); ok {
			t.Fatal("unexpected output before the segment is complete")
		}
	})
	testutil.Equal(t, "allocs per in-order chunk", allocs, 0.0)
	a.Push(evs[i]) // the last chunk completes the segment
	out, ok := a.Next()
	testutil.Equal(t, "segment emitted", ok && out.Kind == stream.OutputSegment, true)
	testutil.Equal(t, "samples", len(out.Segment.Samples), (runs+3)*1024)
}
