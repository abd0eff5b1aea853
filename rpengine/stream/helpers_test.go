package stream_test

import (
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/stream"
)

const rid = "r1"

func pcm(samples ...int16) string {
	b := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func pcmBytes(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func start() *stream.AudioStart {
	return &stream.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 44100, Channels: 1}
}

func delta(seq int, s string) *stream.TextDelta {
	return &stream.TextDelta{RequestID: rid, Sequence: seq, Delta: s}
}

func chunk(seq, seg, pos, count int, samples ...int16) *stream.AudioChunk {
	return &stream.AudioChunk{RequestID: rid, Sequence: seq, SegmentSequence: seg,
		SegmentChunkSequence: pos, SegmentChunkCount: count, Data: pcm(samples...)}
}

func rawChunk(seq, seg, pos, count int, data string) *stream.AudioChunk {
	return &stream.AudioChunk{RequestID: rid, Sequence: seq, SegmentSequence: seg,
		SegmentChunkSequence: pos, SegmentChunkCount: count, Data: data}
}

func textCompleted(s string) *stream.TextCompleted {
	return &stream.TextCompleted{RequestID: rid, Text: s, TokenCount: 3, ElapsedMs: 12.5}
}

func completed() *stream.Completed { return &stream.Completed{RequestID: rid} }

// audioCompleted returns totals matching chunks chunks of bytes bytes.
func audioCompleted(chunks, bytes, segments int) *stream.AudioCompleted {
	return &stream.AudioCompleted{RequestID: rid, ChunkCount: chunks, TotalBytes: bytes,
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

func outEnd(e stream.End) stream.Output { return stream.Output{Kind: stream.OutputEnd, End: e} }

// drain pops every pending output, clearing details (human text, not API)
// and normalising empty slices so outputs compare with reflect.DeepEqual.
func drain(a *stream.Assembler) []stream.Output {
	var outs []stream.Output
	for {
		o, ok := a.Next()
		if !ok {
			return outs
		}
		outs = append(outs, normalize(o))
	}
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
