package stream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

const benchRate = 44100

// reportRealtime reports how many seconds of audio one second of work
// assembles.
func reportRealtime(b *testing.B, audioPerOp time.Duration) {
	perOp := b.Elapsed() / time.Duration(b.N)
	if perOp > 0 {
		b.ReportMetric(float64(audioPerOp)/float64(perOp), "x_realtime")
	}
}

// BenchmarkAssembler_PushChunk pushes in-order chunks of 4096 samples
// (8 KiB, 93 ms) of segments of 32 chunks, popping each segment.
func BenchmarkAssembler_PushChunk(b *testing.B) {
	const samples, perSeg = 4096, 32
	evs := chunkEvents(0, 0, perSeg, samples)
	a := mustAssembler(nil)
	a.PushEvent(start())
	b.ReportAllocs()
	b.SetBytes(2 * samples)
	seg, i := 0, 0
	for b.Loop() {
		evs[i].SegmentSequence = seg // the assembler keeps no reference to a chunk
		a.PushEvent(evs[i])
		if i++; i == perSeg {
			i, seg = 0, seg+1
			if _, ok := a.Next(); !ok {
				b.Fatal("no segment")
			}
		}
	}
	reportRealtime(b, time.Duration(samples)*time.Second/benchRate)
}

// reply30s is a 30 s reply: 10 sentences of 3 s in chunks of 4096
// samples, 100 text deltas, and the closing messages.
func reply30s() []wire.Event {
	var evs []wire.Event
	evs = append(evs, &wire.Accepted{RequestID: rid}, start())
	const segSamples, chunkSamples = 3 * benchRate, 4096
	seq, total, nBytes := 0, "", 0
	for s := range 10 {
		for d := range 10 {
			w := strings.Repeat("w", 8) + " "
			total += w
			evs = append(evs, delta(s*10+d, w))
		}
		count := (segSamples + chunkSamples - 1) / chunkSamples
		for c := range count {
			n := min(chunkSamples, segSamples-c*chunkSamples)
			ce := chunkEvents(s, seq, count, n)[c]
			evs = append(evs, ce)
			seq++
			nBytes += 2 * n
		}
	}
	return append(evs, textCompleted(total),
		&wire.AudioCompleted{RequestID: rid, ChunkCount: seq, TotalBytes: nBytes, SegmentCount: 10, DurationSeconds: float64(nBytes/2) / benchRate},
		completed())
}

// BenchmarkReply30s assembles a whole 30 s reply, against the map-based
// reference model of the tests in the same run.
func BenchmarkReply30s(b *testing.B) {
	evs := reply30s()
	b.Run("assembler", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a := mustAssembler(nil)
			segs := 0
			for _, ev := range evs {
				a.PushEvent(ev)
				for o, ok := a.Next(); ok; o, ok = a.Next() {
					if o.Kind == stream.OutputSegment {
						segs++
					}
				}
			}
			if segs != 10 {
				b.Fatalf("%d segments", segs)
			}
		}
		reportRealtime(b, 30*time.Second)
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := newReference()
			for _, ev := range evs {
				r.push(ev)
			}
		}
		reportRealtime(b, 30*time.Second)
	})
}
