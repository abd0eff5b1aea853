package session

import (
	"fmt"
	"math"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// In file mode, speech arrives as whole segments (one WAV per sentence), not
// as reply.audio.chunk, so the stream assembler never sees it. Its
// reply.audio.completed still carries the totals the engine computes for
// WebSocket, which were measured to be the same in file mode (issue #15,
// docs/rpengine-protocol.md "File transport"): segmentCount, totalBytes
// of PCM without WAV headers, chunkCount as the sum over segments of
// ceil(bytes / 32768) although no chunk was sent, and durationSeconds.
// segmentTotals counts the whole segments a reply received the same way,
// so the totals are checked as the engine computes them and a real
// mismatch is still reported.

const (
	wireChunkBytes     = 32 << 10 // decoded bytes of a full reply.audio.chunk
	maxTrackedSegments = 4096     // segment indexes remembered per reply for missing-segment reports
	totalsSecondsOK    = 0.001    // durationSeconds disagreement tolerated, as over WebSocket
	maxListedSegments  = 32       // missing segments listed in one anomaly, as the assembler does
)

// segmentTotals is what a reply received as whole segments.
type segmentTotals struct {
	seen    map[int]bool // segmentSequence values received (at most maxTrackedSegments)
	count   int          // distinct segments
	maxSeg  int          // highest segmentSequence received, -1 before any
	bytes   int          // PCM bytes
	chunks  int          // sum over segments of ceil(bytes / 32 KiB)
	seconds float64      // sum over segments of samples / rate
	final   *wire.AudioCompleted
}

// add counts seg; a repeated segmentSequence is not counted twice.
func (t *segmentTotals) add(seg stream.Segment) {
	if t.seen == nil {
		t.seen, t.maxSeg = map[int]bool{}, -1
	}
	if t.seen[seg.Index] {
		return
	}
	if len(t.seen) < maxTrackedSegments {
		t.seen[seg.Index] = true
	}
	n := 2 * len(seg.Samples)
	t.count++
	t.maxSeg = max(t.maxSeg, seg.Index)
	t.bytes += n
	t.chunks += (n + wireChunkBytes - 1) / wireChunkBytes
	if seg.SampleRate > 0 {
		t.seconds += float64(len(seg.Samples)) / float64(seg.SampleRate)
	}
}

// check compares the engine's totals with the segments received and
// returns the anomalies: each total that differs, and the segments below
// segmentCount (or below the highest received) that never arrived.
func (t *segmentTotals) check(e *wire.AudioCompleted) []stream.Anomaly {
	var found []stream.Anomaly
	mismatch := func(name string, declared, got any) {
		found = append(found, stream.Anomaly{Kind: stream.AnomalyTotalsMismatch,
			Detail: fmt.Sprintf("reply.audio.completed %s is %v, the audio segments received give %v", name, declared, got)})
	}
	if e.SegmentCount != t.count {
		mismatch("segmentCount", e.SegmentCount, t.count)
	}
	if e.TotalBytes != t.bytes {
		mismatch("totalBytes", e.TotalBytes, t.bytes)
	}
	if e.ChunkCount != t.chunks {
		mismatch("chunkCount", e.ChunkCount, t.chunks)
	}
	if !(math.Abs(e.DurationSeconds-t.seconds) <= totalsSecondsOK) {
		mismatch("durationSeconds", e.DurationSeconds, t.seconds)
	}
	end := e.SegmentCount
	if t.seen != nil {
		end = max(end, t.maxSeg+1)
	}
	var missing []int
	for i := 0; i < end && len(missing) < maxListedSegments && len(t.seen) < maxTrackedSegments; i++ {
		if !t.seen[i] {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		found = append(found, stream.Anomaly{Kind: stream.AnomalyMissingSegments, Sequences: missing,
			Detail: fmt.Sprintf("audio segments never arrived (first %d listed)", len(missing))})
	}
	return found
}
