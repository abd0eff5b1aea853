package stream

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// audioState assembles reply.audio.chunk into segments.
type audioState struct {
	start       *wire.AudioStart     // reply.audio.start, once arrived (a copy)
	unsupported bool                 // the declared format cannot be played: chunks are dropped
	totals      *wire.AudioCompleted // reply.audio.completed, once arrived (a copy)
	completed   bool                 // the audio ended: chunks are stale
	segs        map[int]*segment     // segments not yet emitted or skipped
	nextSeg     int                  // segments below were emitted or skipped
	held        int                  // samples charged for held audio
	maxHeld     int                  // bound on held, in samples
	reserved    int                  // samples of capacity reserved ahead by segs (see newSegment)
	segsSeen    int                  // distinct segments with an accepted chunk
	emitted     int64                // samples emitted so far: the next segment's offset
	scratch     []byte               // decoded chunk data, reused (for chunks that arrive undecoded)
	spare       []int16              // samples that lend allocated for a segment to come (see lend)
	free        []*segment           // emitted segments, reused by newSegment (at most maxFreeSegments)
}

// maxFreeSegments bounds audioState.free, and maxFreeChunks the chunk
// list a reused segment keeps.
const (
	maxFreeSegments = 4
	maxFreeChunks   = 256
)

// segment is one segmentSequence being assembled. Chunks that arrive in
// order are decoded straight into samples; chunks after a gap wait in held.
type segment struct {
	count   int               // segmentChunkCount
	samples []int16           // chunks [0,len(chunks)) in order
	chunks  []chunkMeta       // per appended chunk
	held    map[int]heldChunk // chunks after a gap, by segmentChunkSequence
	cost    int               // samples charged against audioState.held
	reserve int               // samples counted in audioState.reserved
}

type chunkMeta struct {
	seq int // global sequence
	end int // end of the chunk in samples
}

type heldChunk struct {
	seq     int
	samples []int16
}

func (s *segment) complete() bool { return len(s.chunks) == s.count }

// chunk returns the samples of appended chunk pos.
func (s *segment) chunk(pos int) []int16 {
	start := 0
	if pos > 0 {
		start = s.chunks[pos-1].end
	}
	return s.samples[start:s.chunks[pos].end]
}

func (au *audioState) seen() bool { return au.start != nil || au.segsSeen > 0 }

func (au *audioState) release() {
	au.segs, au.held, au.reserved, au.scratch, au.spare, au.free = nil, 0, 0, nil, nil, nil
}

func (a *Assembler) pushAudioStart(e *wire.AudioStart) {
	au := &a.aud
	if au.start != nil {
		x := *e
		x.RequestID = au.start.RequestID // an empty requestId is not a conflict
		a.repeated(*au.start == x, "reply.audio.start")
		return
	}
	c := *e
	au.start = &c
	switch {
	case e.Format != "pcm_s16le" || e.Channels != 1 || e.SampleRate < 1 || e.SampleRate > maxSampleRate:
		au.unsupported = true
		au.release()
		a.anomaly(Anomaly{Kind: AnomalyUnsupportedAudio,
			Detail: fmt.Sprintf("reply.audio.start declares %s, %d Hz, %d channels; want pcm_s16le mono at 1..%d Hz: the reply's audio is dropped",
				peertext.Quote(e.Format, peertext.LogBytes), e.SampleRate, e.Channels, maxSampleRate)})
		return
	case e.SampleRate != expectedSampleRate:
		a.anomaly(Anomaly{Kind: AnomalyUnexpectedRate,
			Detail: fmt.Sprintf("reply.audio.start declares %d Hz, not %d Hz; segments carry the declared rate", e.SampleRate, expectedSampleRate)})
	}
	au.maxHeld = heldSamplesFor(a.opts.MaxHeldAudio, e.SampleRate)
	if au.held > au.maxHeld {
		a.fail(CodeHeldAudioLimit, "held audio exceeds %v at %d Hz", a.opts.MaxHeldAudio, e.SampleRate)
		return
	}
	a.emitReady()
}

// chunkAnomaly reports a dropped chunk.
func (a *Assembler) chunkAnomaly(kind AnomalyKind, e *wire.AudioChunk, format string, args ...any) {
	a.anomaly(Anomaly{Kind: kind, Sequences: []int{e.Sequence}, Segment: e.SegmentSequence,
		Detail: fmt.Sprintf("reply.audio.chunk %d (segment %d, chunk %d of %d): ", e.Sequence, e.SegmentSequence, e.SegmentChunkSequence, e.SegmentChunkCount) + fmt.Sprintf(format, args...)})
}

// pushChunk is the hot path: an in-order chunk of a known segment goes
// into the segment's samples without allocating. pcm is the chunk's data
// when the message decoder decoded it already (see lend), else nil.
func (a *Assembler) pushChunk(e *wire.AudioChunk, pcm []byte) {
	au := &a.aud
	if au.unsupported {
		return // reported once at reply.audio.start
	}
	if !a.validChunk(e) {
		return
	}
	b, ok := a.decodeChunk(e, pcm)
	if !ok {
		return
	}
	n := len(b)
	s := au.segs[e.SegmentSequence]
	if s != nil && s.count != e.SegmentChunkCount {
		a.chunkAnomaly(AnomalyChunkCountMismatch, e, "segmentChunkCount differs from the %d of earlier chunks", s.count)
		return
	}
	if s != nil && a.duplicateChunk(s, e, b) {
		return
	}
	cost := n/2 + chunkOverheadSamples
	if au.held+cost > au.maxHeld {
		a.fail(CodeHeldAudioLimit, "audio held waiting for earlier chunks or segments exceeds %v (segment %d waits for segment %d)", a.opts.MaxHeldAudio, e.SegmentSequence, au.nextSeg)
		return
	}
	if s == nil {
		s = a.newSegment(e, n)
	}
	au.held += cost
	s.cost += cost
	a.stats.Chunks++
	a.stats.Bytes += n
	pos := e.SegmentChunkSequence
	if pos != len(s.chunks) {
		if s.held == nil {
			s.held = make(map[int]heldChunk)
		}
		s.held[pos] = heldChunk{seq: e.Sequence, samples: appendSamples(nil, b)}
		return
	}
	s.samples = appendDecoded(s.samples, b)
	s.chunks = append(s.chunks, chunkMeta{seq: e.Sequence, end: len(s.samples)})
	for len(s.held) > 0 {
		h, ok := s.held[len(s.chunks)]
		if !ok {
			break
		}
		delete(s.held, len(s.chunks))
		s.samples = append(s.samples, h.samples...)
		s.chunks = append(s.chunks, chunkMeta{seq: h.seq, end: len(s.samples)})
	}
	if s.complete() && e.SegmentSequence == au.nextSeg {
		a.emitReady()
	}
}

// lend is the message decoder's Lend (wire.ChunkDecoder): for the next
// in-order chunk of a segment, it returns the capacity of the segment's
// samples where that chunk's n bytes go, so that the decoder decodes the
// data straight into them (appendDecoded then only extends the samples).
// For the first chunk of a new segment it allocates the samples as
// newSegment will, keeps them in spare, and newSegment takes them. It
// lends nothing for anything else (the data then goes through a scratch
// buffer and is copied) and changes nothing else: whether the chunk is
// accepted is pushChunk's decision, made as for any chunk.
func (a *Assembler) lend(h *wire.ChunkHead, n int) []byte {
	au := &a.aud
	if !nativeLittleEndian || a.done || au.unsupported || au.completed || n <= 0 || n%2 != 0 || n > maxChunkBytes ||
		h.SegmentSequence < au.nextSeg || h.SegmentChunkCount < 1 || h.SegmentChunkSequence != 0 && au.segs[h.SegmentSequence] == nil {
		return nil
	}
	var samples []int16
	if s := au.segs[h.SegmentSequence]; s != nil {
		if s.count != h.SegmentChunkCount || h.SegmentChunkSequence != len(s.chunks) {
			return nil
		}
		samples = s.samples
	} else {
		if h.SegmentChunkSequence >= h.SegmentChunkCount {
			return nil
		}
		if c, _, _ := au.segmentCaps(h.SegmentChunkCount, n); cap(au.spare) != c {
			au.spare = make([]int16, 0, c)
		}
		samples = au.spare
	}
	if cap(samples)-len(samples) < n/2 {
		return nil
	}
	return bytesOf(samples[len(samples):cap(samples)])
}

// validChunk checks the numbers of a chunk and whether it is stale.
func (a *Assembler) validChunk(e *wire.AudioChunk) bool {
	switch {
	case e.Sequence < 0 || e.SegmentSequence < 0 || e.SegmentChunkSequence < 0:
		a.chunkAnomaly(AnomalyInvalidChunk, e, "negative sequence number")
	case e.SegmentChunkCount < 1:
		a.chunkAnomaly(AnomalyInvalidChunk, e, "segmentChunkCount below 1")
	case e.SegmentChunkSequence >= e.SegmentChunkCount:
		a.chunkAnomaly(AnomalyInvalidChunk, e, "segmentChunkSequence not below segmentChunkCount")
	case a.aud.completed:
		a.chunkAnomaly(AnomalyStaleChunk, e, "after the end of the audio")
	case e.SegmentSequence < a.aud.nextSeg:
		a.chunkAnomaly(AnomalyStaleChunk, e, "segment already emitted or skipped")
	default:
		return true
	}
	return false
}

// decodeChunk returns the decoded data of e: pcm when the message decoder
// decoded it already, else e.Data decoded into the scratch buffer.
func (a *Assembler) decodeChunk(e *wire.AudioChunk, pcm []byte) ([]byte, bool) {
	if pcm == nil {
		if len(e.Data) > maxEncodedChunk {
			a.chunkAnomaly(AnomalyChunkTooLarge, e, "%d base64 characters decode to more than %d bytes", len(e.Data), maxChunkBytes)
			return nil, false
		}
		n, err := decodeBase64(&a.aud.scratch, e.Data)
		if err != nil {
			a.chunkAnomaly(AnomalyInvalidChunk, e, "data: %v", err)
			return nil, false
		}
		pcm = a.aud.scratch[:n]
	}
	switch n := len(pcm); {
	case n > maxChunkBytes:
		a.chunkAnomaly(AnomalyChunkTooLarge, e, "data decodes to %d bytes, more than %d", n, maxChunkBytes)
	case n%2 != 0:
		a.chunkAnomaly(AnomalyOddChunk, e, "data decodes to %d bytes, not whole 16-bit samples", n)
	default:
		return pcm, true
	}
	return nil, false
}

// duplicateChunk reports whether e, whose data decodes to b, repeats a
// chunk already in s (ignored or reported as a conflict).
func (a *Assembler) duplicateChunk(s *segment, e *wire.AudioChunk, b []byte) bool {
	pos := e.SegmentChunkSequence
	var seq int
	var have []int16
	if pos < len(s.chunks) {
		seq, have = s.chunks[pos].seq, s.chunk(pos)
	} else if h, ok := s.held[pos]; ok {
		seq, have = h.seq, h.samples
	} else {
		return false
	}
	if seq == e.Sequence && sameSamples(have, b) {
		a.stats.Duplicates++
		return true
	}
	an := Anomaly{Kind: AnomalyConflictingChunk, Sequences: []int{seq}, Segment: e.SegmentSequence,
		Detail: fmt.Sprintf("segment %d chunk %d repeated by chunk %d with different data or sequence; the first (sequence %d) is kept", e.SegmentSequence, pos, e.Sequence, seq)}
	if seq != e.Sequence {
		an.Sequences = append(an.Sequences, e.Sequence)
	}
	a.anomaly(an)
	return true
}

// newSegment allocates the state of a segment on its first chunk, sized
// from it so that its later in-order chunks do not allocate.
//
// The capacity reserved ahead of the data is not charged as held audio, so
// it has its own budget: all segments not yet emitted reserve at most
// maxHeld samples together (a chunkMeta counts as chunkMetaSamples), on top
// of the held audio.
// Without it, first chunks claiming a huge segmentChunkCount made each
// segment reserve the whole bound, and a 30 s bound let a hostile engine
// make the game allocate tens of gigabytes. A segment over the budget
// starts at the size of its first chunk and grows by append.
func (a *Assembler) newSegment(e *wire.AudioChunk, n int) *segment {
	au := &a.aud
	if au.segs == nil {
		au.segs = make(map[int]*segment)
	}
	samplesCap, chunksCap, reserve := au.segmentCaps(e.SegmentChunkCount, n)
	var s *segment
	if k := len(au.free); k > 0 {
		s, au.free[k-1] = au.free[k-1], nil
		au.free = au.free[:k-1]
	} else {
		s = new(segment)
	}
	s.count, s.reserve = e.SegmentChunkCount, reserve
	if cap(au.spare) == samplesCap && samplesCap > 0 {
		s.samples, au.spare = au.spare, nil // lent to the decoder already
	} else {
		s.samples = make([]int16, 0, samplesCap)
	}
	if cap(s.chunks) < chunksCap {
		s.chunks = make([]chunkMeta, 0, chunksCap)
	}
	au.reserved += s.reserve
	au.segs[e.SegmentSequence] = s
	au.segsSeen++
	return s
}

// segmentCaps returns the capacity of a new segment's samples and chunk
// list for a first chunk of n bytes of a segment of count chunks, and the
// samples it reserves (see newSegment).
func (au *audioState) segmentCaps(count, n int) (samplesCap, chunksCap, reserve int) {
	budget := au.maxHeld - au.reserved
	samplesCap, chunksCap = n/2, 1 // the first chunk alone: held audio bounds it
	// count*(n/2) + count*chunkMetaSamples <= budget, without overflow.
	if per := n/2 + chunkMetaSamples; count <= budget/per {
		samplesCap, chunksCap = count*(n/2), count
		reserve = count * per
	}
	return samplesCap, chunksCap, reserve
}

// recycle keeps an emitted segment's state (its samples now belong to the
// caller) for newSegment, up to maxFreeSegments.
func (au *audioState) recycle(s *segment) {
	if len(au.free) == maxFreeSegments || len(s.held) > 0 {
		return
	}
	chunks := s.chunks[:0]
	if cap(chunks) > maxFreeChunks {
		chunks = nil
	}
	*s = segment{chunks: chunks}
	au.free = append(au.free, s)
}

// emitReady emits complete segments from nextSeg on, in order.
func (a *Assembler) emitReady() {
	au := &a.aud
	for au.start != nil && !au.unsupported {
		s := au.segs[au.nextSeg]
		if s == nil || !s.complete() {
			return
		}
		a.emit(au.nextSeg, s)
		au.nextSeg++
	}
}

func (a *Assembler) emit(index int, s *segment) {
	au := &a.aud
	rate := au.start.SampleRate
	delete(au.segs, index)
	au.held -= s.cost
	au.reserved -= s.reserve
	n := len(s.samples)
	seg := Segment{
		Index:      index,
		SampleRate: rate,
		Samples:    s.samples[:n:n],
		Offset:     durationOf(au.emitted, rate),
		Duration:   durationOf(int64(n), rate),
	}
	au.emitted += int64(n)
	a.stats.Segments++
	au.recycle(s)
	a.enqueue(item{out: Output{Kind: OutputSegment, Segment: seg}, textLen: -1})
}

func (a *Assembler) pushAudioCompleted(e *wire.AudioCompleted) {
	au := &a.aud
	if au.totals != nil {
		x := *e
		x.RequestID = au.totals.RequestID // an empty requestId is not a conflict
		a.repeated(*au.totals == x, "reply.audio.completed")
		return
	}
	c := *e
	au.totals = &c
	if !au.unsupported {
		a.checkTotals(e)
	}
	a.flushAudio()
	a.audioEnded()
}

// checkTotals compares reply.audio.completed with the accepted chunks.
func (a *Assembler) checkTotals(e *wire.AudioCompleted) {
	au := &a.aud
	mismatch := func(name string, declared, got any) {
		a.anomaly(Anomaly{Kind: AnomalyTotalsMismatch, Detail: fmt.Sprintf("reply.audio.completed %s is %v, the accepted chunks give %v", name, declared, got)})
	}
	if e.ChunkCount != a.stats.Chunks {
		mismatch("chunkCount", e.ChunkCount, a.stats.Chunks)
	}
	if e.TotalBytes != a.stats.Bytes {
		mismatch("totalBytes", e.TotalBytes, a.stats.Bytes)
	}
	if e.SegmentCount != au.segsSeen {
		mismatch("segmentCount", e.SegmentCount, au.segsSeen)
	}
	rate := expectedSampleRate
	if au.start != nil {
		rate = au.start.SampleRate
	}
	got := float64(a.stats.Bytes/2) / float64(rate)
	if !(math.Abs(e.DurationSeconds-got) <= 0.001) {
		mismatch("durationSeconds", e.DurationSeconds, got)
	}
}

// flushAudio ends the audio: complete segments are emitted in order, and
// missing chunks and segments are reported and skipped.
func (a *Assembler) flushAudio() {
	au := &a.aud
	if au.completed || au.unsupported {
		au.completed = true
		return
	}
	au.completed = true
	keys := slices.Sorted(maps.Keys(au.segs))
	if len(keys) > 0 && au.start == nil {
		a.anomaly(Anomaly{Kind: AnomalyMissingAudioStart, Sequences: keys[:min(len(keys), maxListed)],
			Detail: fmt.Sprintf("%d segments arrived without reply.audio.start; dropped", len(keys))})
		au.release()
		return
	}
	end := au.nextSeg
	if len(keys) > 0 {
		end = keys[len(keys)-1] + 1
	}
	if au.totals != nil && au.totals.SegmentCount > end {
		end = au.totals.SegmentCount
	}
	if missing := missingSegments(au.nextSeg, end, au.segs); len(missing) > 0 {
		a.anomaly(Anomaly{Kind: AnomalyMissingSegments, Sequences: missing,
			Detail: fmt.Sprintf("segments missing at the end of the audio (first %d listed); skipped", len(missing))})
	}
	for _, k := range keys {
		s := au.segs[k]
		if s.complete() {
			a.emit(k, s)
			continue
		}
		a.anomaly(Anomaly{Kind: AnomalyMissingChunks, Sequences: s.missing(), Segment: k,
			Detail: fmt.Sprintf("segment %d has %d of %d chunks at the end of the audio; skipped", k, len(s.chunks)+len(s.held), s.count)})
	}
	au.nextSeg = end
	au.release()
}

// missingSegments lists (at most maxListed) indexes in [from,to) absent
// from segs.
func missingSegments(from, to int, segs map[int]*segment) []int {
	var out []int
	for i := from; i < to && len(out) < maxListed; i++ {
		if _, ok := segs[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// missing lists (at most maxListed) chunk positions not yet received.
func (s *segment) missing() []int {
	var out []int
	for i := len(s.chunks); i < s.count && len(out) < maxListed; i++ {
		if _, ok := s.held[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}
