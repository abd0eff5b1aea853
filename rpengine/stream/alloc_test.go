package stream_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// chunkEvents returns count in-order chunks of one segment, each of
// samples samples.
func chunkEvents(seg, firstSeq, count, samples int) []*wire.AudioChunk {
	data := make([]int16, samples)
	for i := range data {
		data[i] = int16(i * 7)
	}
	enc := pcm(data...)
	evs := make([]*wire.AudioChunk, count)
	for i := range evs {
		evs[i] = rawChunk(firstSeq+i, seg, i, count, enc)
	}
	return evs
}

// TestAssembler_PushAllocs pins zero allocations per in-order chunk in
// steady state: after the first chunk of a segment sized its buffers,
// pushing the next chunks and polling Next allocates nothing. It counts
// every allocation of the run (testing.AllocsPerRun rounds the average
// down, which would hide an append that grows a buffer a few times). Four
// segments of about 9 s each run in a row, so that an emitted segment must
// give its reservation back (the four together exceed the 30 s budget).
//
// The count is the process's, so an allocation the runtime makes meanwhile
// counts too: one run in about a hundred counted one, under wine and on
// Linux, and none in 1600 segments when a collection ran just before each
// (so a collection running during the loop is the likely maker). Each
// segment is therefore measured right after a collection, and a run that
// allocated is made again, up to three times, with a new assembler: an
// allocation of the assembler's own comes back in every run, a stray one
// does not.
func TestAssembler_PushAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var mallocs [4]uint64
	for attempt := 1; ; attempt++ {
		mallocs = pushInOrder(t)
		if mallocs == [4]uint64{} || attempt == 3 {
			break
		}
		t.Logf("run %d: allocations by in-order chunks of each segment %v; running again", attempt, mallocs)
	}
	testutil.Equal(t, "allocations by in-order chunks of each segment", mallocs, [4]uint64{})
}

// pushInOrder pushes four segments of in-order chunks through a new
// assembler and returns the allocations made while each segment's chunks
// after its first (and before its last) were pushed and polled.
func pushInOrder(t *testing.T) (mallocs [4]uint64) {
	const count = 400
	a := mustAssembler(nil)
	a.PushEvent(start())
	for seg := range 4 {
		evs := chunkEvents(seg, seg*count, count, 1024)
		a.PushEvent(evs[0]) // first use of the segment: sizes its buffers
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for _, ev := range evs[1 : count-1] {
			a.PushEvent(ev)
			if _, ok := a.Next(); ok {
				t.Fatal("unexpected output before the segment is complete")
			}
		}
		runtime.ReadMemStats(&m1)
		mallocs[seg] = m1.Mallocs - m0.Mallocs
		a.PushEvent(evs[count-1]) // the last chunk completes the segment
		out, ok := a.Next()
		testutil.Equal(t, "segment emitted", ok && out.Kind == stream.OutputSegment && out.Segment.Index == seg, true)
		testutil.Equal(t, "samples", len(out.Segment.Samples), count*1024)
	}
	return mallocs
}

// TestAssembler_ReserveBounded pins the memory a hostile engine can make
// the assembler allocate: first chunks of ever new segments that each claim
// a huge segmentChunkCount must not each reserve the whole held-audio
// bound. Before the reservation budget, a 1 s bound let 679 such chunks
// allocate about 70 MB (58 GB with the default 30 s). Not parallel, so
// that MemStats.TotalAlloc counts this test alone.
func TestAssembler_ReserveBounded(t *testing.T) {
	opts := &stream.Options{MaxHeldAudio: time.Second}
	evs := make([]*wire.AudioChunk, 0, 1024)
	for seg := 1; seg <= cap(evs); seg++ {
		evs = append(evs, chunk(seg, seg, 0, 1<<40, 1))
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	a := mustAssembler(opts)
	a.PushEvent(start())
	pushed := 0
	for _, ev := range evs {
		if a.Done() {
			break
		}
		a.PushEvent(ev)
		pushed++
		for _, ok := a.Next(); ok; _, ok = a.Next() {
		}
	}
	runtime.ReadMemStats(&m1)
	testutil.Equal(t, "ended by the held-audio bound", a.Done(), true)
	const limit = 8 << 20 // the 1 s bound is 88 KiB of samples
	if got := m1.TotalAlloc - m0.TotalAlloc; got > limit {
		t.Fatalf("%d first chunks allocated %d bytes, want at most %d", pushed, got, limit)
	}
}

// TestAssembler_TextLinear pins that each text output shares the text
// instead of copying it: 20000 deltas of 10 bytes, drained after every
// push, allocate a few times the 200 KB of text. When each output copied
// the whole text, they allocated about 2 GB (quadratic: a hostile engine
// within the 4 MiB default froze the reader). Not parallel, so that
// MemStats.TotalAlloc counts this test alone.
func TestAssembler_TextLinear(t *testing.T) {
	const n = 20000
	evs := make([]*wire.TextDelta, n)
	for i := range evs {
		evs[i] = delta(i, "0123456789")
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	a := mustAssembler(nil)
	var last string
	for _, ev := range evs {
		a.PushEvent(ev)
		for o, ok := a.Next(); ok; o, ok = a.Next() {
			last = o.Text
		}
	}
	runtime.ReadMemStats(&m1)
	testutil.Equal(t, "text length", len(last), 10*n)
	const limit = 16 << 20
	if got := m1.TotalAlloc - m0.TotalAlloc; got > limit {
		t.Fatalf("%d deltas allocated %d bytes, want at most %d", n, got, limit)
	}
}

// chunkText is the text of a reply.audio.chunk message as engines send it.
func chunkText(seq, seg, pos, count int, data string) []byte {
	return fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m-%d",`+
		`"sessionId":"s-1","timestamp":"2026-07-14T00:00:00.000Z","requestId":"%s","sequence":%d,"segmentSequence":%d,`+
		`"segmentChunkSequence":%d,"segmentChunkCount":%d,"data":"%s"}`, seq, rid, seq, seg, pos, count, data)
}

// TestAssembler_PushRawAllocs pins zero allocations per in-order chunk
// from message text to assembled samples: Push decodes the envelope and
// the chunk without encoding/json, into the segment's samples.
func TestAssembler_PushRawAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	const runs = 200
	samples := make([]int16, 4096)
	for i := range samples {
		samples[i] = int16(i * 13)
	}
	data := pcm(samples...)
	msgs := make([][]byte, runs+3)
	for i := range msgs {
		msgs[i] = chunkText(i, 0, i, len(msgs), data)
	}
	a := mustAssembler(nil)
	testutil.Success(t, a.Push([]byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.start","messageId":"s",`+
		`"timestamp":"t","requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1}`)))
	push := func(i int) {
		if err := a.Push(msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	push(0)
	i := 1
	allocs := testing.AllocsPerRun(runs, func() {
		push(i)
		i++
		if out, ok := a.Next(); ok {
			t.Fatalf("unexpected output %v", out.Kind)
		}
	})
	testutil.Equal(t, "allocs per chunk", allocs, 0.0)
	push(i)
	out, ok := a.Next()
	testutil.Equal(t, "segment emitted", ok && out.Kind == stream.OutputSegment, true)
	testutil.Equal(t, "samples", len(out.Segment.Samples), len(msgs)*len(samples))
	testutil.Equal(t, "last sample", out.Segment.Samples[len(out.Segment.Samples)-1], samples[len(samples)-1])
}

// TestAssembler_PushRawSegmentAllocs pins what a whole sentence costs from
// message text: one allocation, the samples the caller keeps. The
// segment's bookkeeping is reused from the segments emitted before it,
// and the data of its chunks is decoded into those samples (issue #24: a
// segment cost three allocations, and its first chunk a copy).
func TestAssembler_PushRawSegmentAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	const runs, chunks = 100, 3
	data := pcm(make([]int16, 2048)...)
	msgs := make([][]byte, (runs+3)*chunks) // AllocsPerRun runs once more
	for i := range msgs {
		msgs[i] = chunkText(i, i/chunks, i%chunks, chunks, data)
	}
	a := mustAssembler(nil)
	testutil.Success(t, a.Push([]byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.start","messageId":"s",`+
		`"timestamp":"t","requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1}`)))
	next := 0
	segment := func() {
		for range chunks {
			if err := a.Push(msgs[next]); err != nil {
				t.Fatal(err)
			}
			next++
		}
		out, ok := a.Next()
		if !ok || out.Kind != stream.OutputSegment || len(out.Segment.Samples) != chunks*2048 {
			t.Fatalf("no segment of %d samples: %+v", chunks*2048, out)
		}
	}
	segment()
	segment()
	testutil.Equal(t, "allocations per segment", testing.AllocsPerRun(runs, segment), 1.0)
}
