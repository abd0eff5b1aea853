package stream_test

import (
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

const rid = "r1"

// finalOf is the End.Final that reply.text.completed tc gives, or nil.
func finalOf(tc *wire.TextCompleted) *stream.Final {
	if tc == nil {
		return nil
	}
	return &stream.Final{Text: tc.Text, TokenCount: tc.TokenCount, Elapsed: time.Duration(tc.ElapsedMs * float64(time.Millisecond)), Extracted: tc.ExtractedContent}
}

// mustAssembler is NewAssembler for options that are valid.
func mustAssembler(o *stream.Options) *stream.Assembler {
	a, err := stream.NewAssembler(o)
	if err != nil {
		panic(err)
	}
	return a
}

func pcm(samples ...int16) string {
	b := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func pcmBytes(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func start() *wire.AudioStart {
	return &wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 44100, Channels: 1}
}

func delta(seq int, s string) *wire.TextDelta {
	return &wire.TextDelta{RequestID: rid, Sequence: seq, Delta: s}
}

func chunk(seq, seg, pos, count int, samples ...int16) *wire.AudioChunk {
	return &wire.AudioChunk{RequestID: rid, Sequence: seq, SegmentSequence: seg,
		SegmentChunkSequence: pos, SegmentChunkCount: count, Data: pcm(samples...)}
}

func rawChunk(seq, seg, pos, count int, data string) *wire.AudioChunk {
	return &wire.AudioChunk{RequestID: rid, Sequence: seq, SegmentSequence: seg,
		SegmentChunkSequence: pos, SegmentChunkCount: count, Data: data}
}

func textCompleted(s string) *wire.TextCompleted {
	return &wire.TextCompleted{RequestID: rid, Text: s, TokenCount: 3, ElapsedMs: 12.5}
}

func completed() *wire.Completed { return &wire.Completed{RequestID: rid} }

// audioCompleted returns totals matching chunks chunks of bytes bytes.
func audioCompleted(chunks, bytes, segments int) *wire.AudioCompleted {
	return &wire.AudioCompleted{RequestID: rid, ChunkCount: chunks, TotalBytes: bytes,
		SegmentCount: segments, DurationSeconds: float64(bytes/2) / 44100}
}

func outText(s string) stream.Output { return stream.Output{Kind: stream.OutputText, Text: s} }

func outSeg(index, rate int, offsetSamples int64, samples ...int16) stream.Output {
	return stream.Output{Kind: stream.OutputSegment, Segment: stream.Segment{
		Index: index, SampleRate: rate, Samples: samples,
		Offset:   time.Duration(offsetSamples) * time.Second / time.Duration(rate),
		Duration: time.Duration(len(samples)) * time.Second / time.Duration(rate),
	}}
}

func outAnomaly(kind stream.AnomalyKind, segment int, seqs ...int) stream.Output {
	return stream.Output{Kind: stream.OutputAnomaly, Anomaly: stream.Anomaly{Kind: kind, Segment: segment, Sequences: seqs}}
}

func outAudioEnd() stream.Output { return stream.Output{Kind: stream.OutputAudioEnd} }

func outEnd(e stream.End) stream.Output { return stream.Output{Kind: stream.OutputEnd, End: e} }

// drain pops every pending output, clearing details (human text, not API)
// and normalising empty slices so outputs compare with reflect.DeepEqual.
func drain(a *stream.Assembler) []stream.Output {
	outs := popAll(a)
	for i, o := range outs {
		outs[i] = normalize(o)
	}
	return outs
}

// popAll pops every pending output as it is.
func popAll(a *stream.Assembler) []stream.Output {
	var outs []stream.Output
	for o, ok := a.Next(); ok; o, ok = a.Next() {
		outs = append(outs, o)
	}
	return outs
}

func normalize(o stream.Output) stream.Output {
	o.Anomaly.Detail = ""
	o.End.Message = stripLocal(o.End)
	if len(o.Anomaly.Sequences) == 0 {
		o.Anomaly.Sequences = nil
	}
	if len(o.Segment.Samples) == 0 {
		o.Segment.Samples = nil
	}
	return o
}

// stripLocal drops the message of a bound violation (human text) but keeps
// the engine's message of a request.error.
func stripLocal(e stream.End) string {
	switch e.Code {
	case stream.CodeHeldAudioLimit, stream.CodeHeldTextLimit, stream.CodeTextLimit:
		return ""
	}
	return e.Message
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// messageOf is the text of ev as an engine sends it: the envelope, then
// the payload's fields in their order (a chunk's data last). A nil event
// is a message of a type no reply has.
func messageOf(tb testing.TB, ev wire.Event) []byte {
	typ := "x.unknown"
	for _, t := range []string{wire.TypeReplyAccepted, wire.TypeTextDelta, wire.TypeTextCompleted, wire.TypeAudioStart,
		wire.TypeAudioChunk, wire.TypeAudioCompleted, wire.TypeReplyCompleted, wire.TypeReplyCancelled, wire.TypeRequestError,
		wire.TypeCaptureLevel, wire.TypeCaptureState, wire.TypeCaptureTranscript} {
		if ev != nil && !reflect.ValueOf(ev).IsNil() && reflect.TypeOf(wire.NewEvent(t)) == reflect.TypeOf(ev) {
			typ = t
		}
	}
	var payload any
	if typ != "x.unknown" {
		payload = ev
	}
	b, err := wire.Encode(typ, "m-"+strconv.Itoa(int(msgCount.Add(1))), "s-1", time.Unix(0, 0), payload)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

var msgCount atomic.Int64
