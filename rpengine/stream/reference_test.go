package stream_test

import (
	"encoding/base64"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// reference is a trivially-correct model of the assembler: it keeps every
// accepted delta and chunk in maps, as received, and recomputes what may
// be emitted from scratch after every event. It has no bounds and handles
// only events whose numbers are valid (what the random generator makes).
type reference struct {
	deltas    map[int]string
	final     *wire.TextCompleted
	shownText string

	start    bool
	rate     int
	chunks   map[[2]int]refChunk // by segment, position
	counts   map[int]int         // segmentChunkCount of each segment
	next     int                 // segments below were emitted or skipped
	emitted  int64               // samples emitted
	done     bool                // audio ended
	totals   *wire.AudioCompleted
	nChunks  int
	nBytes   int
	ended    bool
	out      []stream.Output
	late     int
	accepted *wire.Accepted
	audioEnd bool // OutputAudioEnd emitted
}

// audioEnded emits OutputAudioEnd once.
func (r *reference) audioEnded() {
	if !r.audioEnd {
		r.audioEnd = true
		r.out = append(r.out, outAudioEnd())
	}
}

type refChunk struct {
	seq  int
	data string
}

func newReference() *reference {
	return &reference{deltas: map[int]string{}, chunks: map[[2]int]refChunk{}, counts: map[int]int{}}
}

func (r *reference) anomaly(kind stream.AnomalyKind, segment int, seqs ...int) {
	r.out = append(r.out, outAnomaly(kind, segment, seqs...))
}

// push returns the outputs of one event.
func (r *reference) push(ev wire.Event) []stream.Output {
	r.out = nil
	if r.ended {
		r.late++
		return nil
	}
	switch e := ev.(type) {
	case *wire.Accepted:
		r.accepted = e
	case *wire.TextDelta:
		r.delta(e)
	case *wire.TextCompleted:
		r.textCompleted(e)
	case *wire.AudioStart:
		if r.start {
			break // the generator repeats it identically
		}
		r.start, r.rate = true, e.SampleRate
		r.emitReady()
	case *wire.AudioChunk:
		r.chunk(e)
	case *wire.AudioCompleted:
		r.audioCompleted(e)
	case *wire.Completed:
		if r.final == nil && r.textWithGaps() != r.prefix() {
			r.anomaly(stream.AnomalyTextGap, 0, r.missingDeltas()...)
		}
		r.showText(r.text(true))
		if (r.start || len(r.counts) > 0) && !r.done {
			r.anomaly(stream.AnomalyMissingAudioCompleted, 0)
		}
		r.flush()
		r.end(stream.End{State: stream.EndCompleted})
	case *wire.Cancelled:
		r.end(stream.End{State: stream.EndCancelled, Reason: e.Reason})
	case *wire.Failed:
		r.end(stream.End{State: stream.EndFailed, Code: e.Code, Message: e.Message, Retryable: e.Retryable})
	}
	return r.out
}

func (r *reference) end(e stream.End) {
	if r.start || len(r.counts) > 0 {
		r.audioEnded() // the reply ends in the middle of its audio
	}
	e.Final = finalOf(r.final)
	r.ended = true
	r.out = append(r.out, outEnd(e))
}

func (r *reference) delta(e *wire.TextDelta) {
	old, ok := r.deltas[e.Sequence]
	switch {
	case r.final != nil:
		r.anomaly(stream.AnomalyLateDelta, 0, e.Sequence)
	case ok && old != e.Delta:
		r.anomaly(stream.AnomalyConflictingDelta, 0, e.Sequence)
	case !ok:
		r.deltas[e.Sequence] = e.Delta
		r.showText(r.text(false))
	}
}

// prefix is the deltas from 0 up to the first gap.
func (r *reference) prefix() string {
	s := ""
	for i := 0; ; i++ {
		d, ok := r.deltas[i]
		if !ok {
			return s
		}
		s += d
	}
}

// textWithGaps is every delta in sequence order, gaps skipped.
func (r *reference) textWithGaps() string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(r.deltas)) {
		s += r.deltas[k]
	}
	return s
}

func (r *reference) missingDeltas() []int {
	var out []int
	hi := -1
	for k := range r.deltas {
		hi = max(hi, k)
	}
	for i := 0; i < hi && len(out) < 32; i++ {
		if _, ok := r.deltas[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

func (r *reference) text(ended bool) string {
	switch {
	case r.final != nil:
		return r.final.Text
	case ended:
		return r.textWithGaps()
	}
	return r.prefix()
}

func (r *reference) showText(s string) {
	if s != r.shownText {
		r.shownText = s
		r.out = append(r.out, outText(s))
	}
}

func (r *reference) textCompleted(e *wire.TextCompleted) {
	if r.final != nil {
		if r.final.Text != e.Text {
			r.anomaly(stream.AnomalyConflictingMessage, 0)
		}
		return
	}
	// No delta at all (buffered responseProcessing) and a difference in
	// surrounding whitespace only (the engine trims the completed text)
	// are not mismatches (issue #15).
	if got := r.textWithGaps(); got != e.Text && len(r.deltas) > 0 && strings.TrimSpace(got) != e.Text {
		r.anomaly(stream.AnomalyTextMismatch, 0, r.missingDeltas()...)
	}
	r.final = e
	r.showText(e.Text)
}

func (r *reference) chunk(e *wire.AudioChunk) {
	if r.done || e.SegmentSequence < r.next {
		r.anomaly(stream.AnomalyStaleChunk, e.SegmentSequence, e.Sequence)
		return
	}
	key := [2]int{e.SegmentSequence, e.SegmentChunkSequence}
	if old, ok := r.chunks[key]; ok {
		switch {
		case old.seq != e.Sequence:
			r.anomaly(stream.AnomalyConflictingChunk, e.SegmentSequence, old.seq, e.Sequence)
		case old.data != e.Data:
			r.anomaly(stream.AnomalyConflictingChunk, e.SegmentSequence, old.seq)
		}
		return
	}
	r.chunks[key] = refChunk{seq: e.Sequence, data: e.Data}
	r.counts[e.SegmentSequence] = e.SegmentChunkCount
	r.nChunks++
	r.nBytes += len(decode(e.Data))
	r.emitReady()
}

func (r *reference) complete(seg int) bool {
	n, ok := r.counts[seg]
	if !ok {
		return false
	}
	for i := range n {
		if _, ok := r.chunks[[2]int{seg, i}]; !ok {
			return false
		}
	}
	return true
}

func (r *reference) emitReady() {
	for r.start && r.complete(r.next) {
		r.emit(r.next)
		r.next++
	}
}

func (r *reference) emit(seg int) {
	var samples []int16
	for i := range r.counts[seg] {
		b := decode(r.chunks[[2]int{seg, i}].data)
		for j := 0; j < len(b); j += 2 {
			samples = append(samples, int16(binary.LittleEndian.Uint16(b[j:])))
		}
	}
	o := outSeg(seg, r.rate, 0, samples...)
	o.Segment.Offset = time.Duration(r.emitted) * time.Second / time.Duration(r.rate)
	r.emitted += int64(len(samples))
	r.out = append(r.out, o)
}

func (r *reference) audioCompleted(e *wire.AudioCompleted) {
	if r.totals != nil {
		if *r.totals != *e {
			r.anomaly(stream.AnomalyConflictingMessage, 0)
		}
		return
	}
	r.totals = e
	rate := 44100
	if r.start {
		rate = r.rate
	}
	for _, bad := range []bool{e.ChunkCount != r.nChunks, e.TotalBytes != r.nBytes, e.SegmentCount != len(r.counts),
		math.Abs(e.DurationSeconds-float64(r.nBytes/2)/float64(rate)) > 0.001} {
		if bad {
			r.anomaly(stream.AnomalyTotalsMismatch, 0)
		}
	}
	r.flush()
	r.audioEnded()
}

func (r *reference) flush() {
	if r.done {
		return
	}
	r.done = true
	var pending []int
	for _, k := range slices.Sorted(maps.Keys(r.counts)) {
		if k >= r.next {
			pending = append(pending, k)
		}
	}
	if len(pending) > 0 && !r.start {
		r.anomaly(stream.AnomalyMissingAudioStart, 0, pending[:min(len(pending), 32)]...)
		r.next = pending[len(pending)-1] + 1 // dropped
		return
	}
	end := r.next
	if len(pending) > 0 {
		end = pending[len(pending)-1] + 1
	}
	if r.totals != nil {
		end = max(end, r.totals.SegmentCount)
	}
	var missing []int
	for i := r.next; i < end && len(missing) < 32; i++ {
		if _, ok := r.counts[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		r.anomaly(stream.AnomalyMissingSegments, 0, missing...)
	}
	for _, k := range pending {
		if r.complete(k) {
			r.emit(k)
			continue
		}
		var lack []int
		for i := 0; i < r.counts[k] && len(lack) < 32; i++ {
			if _, ok := r.chunks[[2]int{k, i}]; !ok {
				lack = append(lack, i)
			}
		}
		r.anomaly(stream.AnomalyMissingChunks, k, lack...)
	}
	r.next = end
}

func decode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err) // the generator makes valid data only
	}
	return b
}
