package stream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

type assemblerCase struct {
	name   string
	opts   *stream.Options
	events []wire.Event
	want   []stream.Output // outputs, drained after every push
	stats  *stream.Stats   // when set, the final counters
}

func strp(s string) *string { return &s }

// assemblerCases covers every message kind and every anomaly. It also seeds
// the fuzz corpus.
func assemblerCases() []assemblerCase {
	tc := textCompleted("abc")
	odd := base64Of([]byte{1, 2, 3})
	big := base64Of(make([]byte, 32<<10+2))
	return []assemblerCase{
		{name: "text in order", events: []wire.Event{
			&wire.Accepted{RequestID: rid, EventID: "e", QueueDepth: 1}, delta(0, "a"), delta(1, "b"), delta(2, "c"), tc, completed()},
			want: []stream.Output{outText("a"), outText("ab"), outText("abc"), outEnd(stream.End{State: stream.EndCompleted, Final: finalOf(tc)})}},
		{name: "gap holds later deltas back", events: []wire.Event{delta(2, "c"), delta(1, "b"), delta(0, "a")},
			want: []stream.Output{outText("abc")}},
		{name: "duplicate delta ignored", events: []wire.Event{delta(0, "a"), delta(0, "a"), delta(2, "c"), delta(2, "c")},
			want:  []stream.Output{outText("a")},
			stats: &stream.Stats{Duplicates: 2}},
		{name: "conflicting delta keeps the first", events: []wire.Event{delta(0, "a"), delta(0, "x"), delta(2, "c"), delta(2, "y"), delta(1, "b")},
			want: []stream.Output{outText("a"), outAnomaly(stream.AnomalyConflictingDelta, 0, 0), outAnomaly(stream.AnomalyConflictingDelta, 0, 2), outText("abc")}},
		{name: "negative delta sequence", events: []wire.Event{delta(-1, "a")},
			want: []stream.Output{outAnomaly(stream.AnomalyInvalidDelta, 0, -1)}},
		{name: "completed text wins over deltas", events: []wire.Event{delta(0, "a"), delta(1, "b"), tc},
			want: []stream.Output{outText("a"), outText("ab"), outAnomaly(stream.AnomalyTextMismatch, 0), outText("abc")}},
		{name: "completed text fills a gap", events: []wire.Event{delta(0, "a"), delta(2, "c"), tc},
			want: []stream.Output{outText("a"), outAnomaly(stream.AnomalyTextMismatch, 0, 1), outText("abc")}},
		// Issue #15: buffered responseProcessing sends no delta; the
		// engine trims the completed text, not the deltas.
		{name: "completed text without deltas", events: []wire.Event{tc},
			want: []stream.Output{outText("abc")}},
		{name: "completed text is the trimmed deltas", events: []wire.Event{delta(0, "\n a"), delta(1, "bc \n"), tc},
			want: []stream.Output{outText("\n a"), outText("\n abc \n"), outText("abc")}},
		{name: "completed text equal to held deltas", events: []wire.Event{delta(0, "ab"), delta(2, "c"), tc},
			want: []stream.Output{outText("ab"), outText("abc")}},
		{name: "delta after completed text", events: []wire.Event{delta(0, "abc"), tc, delta(1, "d")},
			want: []stream.Output{outText("abc"), outAnomaly(stream.AnomalyLateDelta, 0, 1)}},
		{name: "text gap at the end is skipped", events: []wire.Event{delta(0, "a"), delta(2, "c"), delta(4, "e"), completed()},
			want: []stream.Output{outText("a"), outAnomaly(stream.AnomalyTextGap, 0, 1, 3), outText("ace"), outEnd(stream.End{State: stream.EndCompleted})}},
		{name: "duplicate and conflicting text.completed", events: []wire.Event{tc, textCompleted("abc"), textCompleted("abd")},
			want:  []stream.Output{outText("abc"), outAnomaly(stream.AnomalyConflictingMessage, 0)},
			stats: &stream.Stats{Duplicates: 1}},
		{name: "duplicate and conflicting accepted", events: []wire.Event{
			&wire.Accepted{RequestID: rid, QueueDepth: 1}, &wire.Accepted{RequestID: rid, QueueDepth: 1}, &wire.Accepted{RequestID: rid, QueueDepth: 2}},
			want:  []stream.Output{outAnomaly(stream.AnomalyConflictingMessage, 0)},
			stats: &stream.Stats{Duplicates: 1}},
		{name: "segment of two chunks", events: []wire.Event{start(), chunk(0, 0, 0, 2, 1, 2), chunk(1, 0, 1, 2, 3)},
			want:  []stream.Output{outSeg(0, 44100, 0, 1, 2, 3)},
			stats: &stream.Stats{Chunks: 2, Bytes: 6, Segments: 1}},
		{name: "huge chunk count", events: []wire.Event{start(), chunk(0, 0, 0, 1<<62, 1, 2), audioCompleted(1, 4, 1)},
			want: []stream.Output{outAnomaly(stream.AnomalyMissingChunks, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32), outAudioEnd()}},
		{name: "chunks out of order within a segment", events: []wire.Event{start(), chunk(2, 0, 2, 3, 5), chunk(1, 0, 1, 3, 3, 4), chunk(0, 0, 0, 3, 1, 2)},
			want: []stream.Output{outSeg(0, 44100, 0, 1, 2, 3, 4, 5)}},
		{name: "segments in order with offsets", events: []wire.Event{start(), chunk(1, 1, 0, 1, 7, 8, 9), chunk(0, 0, 0, 1, 1, 2), chunk(2, 2, 0, 1, 4)},
			want: []stream.Output{outSeg(0, 44100, 0, 1, 2), outSeg(1, 44100, 2, 7, 8, 9), outSeg(2, 44100, 5, 4)}},
		{name: "chunks before start wait for it", events: []wire.Event{chunk(0, 0, 0, 1, 1), start()},
			want: []stream.Output{outSeg(0, 44100, 0, 1)}},
		{name: "other rate passed through", events: []wire.Event{
			&wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 48000, Channels: 1}, chunk(0, 0, 0, 1, 1, 2)},
			want: []stream.Output{outAnomaly(stream.AnomalyUnexpectedRate, 0), outSeg(0, 48000, 0, 1, 2)}},
		{name: "unsupported format drops audio, keeps text", events: []wire.Event{
			&wire.AudioStart{RequestID: rid, Format: "opus", SampleRate: 48000, Channels: 1}, chunk(0, 0, 0, 1, 1), delta(0, "a"), audioCompleted(1, 2, 1), completed()},
			want: []stream.Output{outAnomaly(stream.AnomalyUnsupportedAudio, 0), outText("a"), outAudioEnd(), outEnd(stream.End{State: stream.EndCompleted})}},
		{name: "stereo unsupported", events: []wire.Event{
			&wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 44100, Channels: 2}},
			want: []stream.Output{outAnomaly(stream.AnomalyUnsupportedAudio, 0)}},
		{name: "duplicate and conflicting audio.start", events: []wire.Event{start(), start(),
			&wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 16000, Channels: 1}},
			want:  []stream.Output{outAnomaly(stream.AnomalyConflictingMessage, 0)},
			stats: &stream.Stats{Duplicates: 1}},
		{name: "invalid chunks", events: []wire.Event{start(),
			chunk(-1, 0, 0, 1, 1), chunk(1, -1, 0, 1, 1), chunk(2, 0, -1, 1, 1), chunk(3, 0, 0, 0, 1), chunk(4, 0, 1, 1, 1), rawChunk(5, 0, 0, 1, "!!!!")},
			want: []stream.Output{outAnomaly(stream.AnomalyInvalidChunk, 0, -1), outAnomaly(stream.AnomalyInvalidChunk, -1, 1),
				outAnomaly(stream.AnomalyInvalidChunk, 0, 2), outAnomaly(stream.AnomalyInvalidChunk, 0, 3),
				outAnomaly(stream.AnomalyInvalidChunk, 0, 4), outAnomaly(stream.AnomalyInvalidChunk, 0, 5)}},
		{name: "chunk too large", events: []wire.Event{start(), rawChunk(0, 0, 0, 1, big)},
			want: []stream.Output{outAnomaly(stream.AnomalyChunkTooLarge, 0, 0)}},
		{name: "chunk of exactly 32 KiB", events: []wire.Event{start(), rawChunk(0, 0, 0, 1, base64Of(make([]byte, 32<<10)))},
			want: []stream.Output{outSeg(0, 44100, 0, make([]int16, 16<<10)...)}},
		{name: "odd chunk", events: []wire.Event{start(), rawChunk(0, 0, 0, 1, odd)},
			want: []stream.Output{outAnomaly(stream.AnomalyOddChunk, 0, 0)}},
		{name: "chunk count mismatch", events: []wire.Event{start(), chunk(0, 0, 0, 2, 1), chunk(1, 0, 1, 3, 2), chunk(2, 0, 1, 2, 3)},
			want: []stream.Output{outAnomaly(stream.AnomalyChunkCountMismatch, 0, 1), outSeg(0, 44100, 0, 1, 3)}},
		{name: "conflicting chunks keep the first", events: []wire.Event{start(),
			chunk(0, 0, 0, 3, 1), chunk(0, 0, 0, 3, 9), chunk(2, 0, 2, 3, 3), chunk(7, 0, 2, 3, 3), chunk(1, 0, 1, 3, 2)},
			want: []stream.Output{outAnomaly(stream.AnomalyConflictingChunk, 0, 0), outAnomaly(stream.AnomalyConflictingChunk, 0, 2, 7), outSeg(0, 44100, 0, 1, 2, 3)}},
		{name: "duplicate chunks ignored", events: []wire.Event{start(), chunk(0, 0, 0, 3, 1), chunk(0, 0, 0, 3, 1), chunk(2, 0, 2, 3, 3), chunk(2, 0, 2, 3, 3), chunk(1, 0, 1, 3, 2)},
			want:  []stream.Output{outSeg(0, 44100, 0, 1, 2, 3)},
			stats: &stream.Stats{Duplicates: 2, Chunks: 3, Bytes: 6, Segments: 1}},
		{name: "stale chunks", events: []wire.Event{start(), chunk(0, 0, 0, 1, 1), chunk(0, 0, 0, 1, 1), audioCompleted(1, 2, 1), chunk(1, 1, 0, 1, 2)},
			want: []stream.Output{outSeg(0, 44100, 0, 1), outAnomaly(stream.AnomalyStaleChunk, 0, 0), outAudioEnd(), outAnomaly(stream.AnomalyStaleChunk, 1, 1)}},
		{name: "totals match", events: []wire.Event{start(), chunk(0, 0, 0, 2, 1), chunk(1, 0, 1, 2, 2, 3), audioCompleted(2, 6, 1)},
			want: []stream.Output{outSeg(0, 44100, 0, 1, 2, 3), outAudioEnd()}},
		{name: "totals mismatch", events: []wire.Event{start(), chunk(0, 0, 0, 1, 1),
			&wire.AudioCompleted{RequestID: rid, ChunkCount: 2, TotalBytes: 3, SegmentCount: 4, DurationSeconds: 1}},
			want: []stream.Output{outSeg(0, 44100, 0, 1), outAnomaly(stream.AnomalyTotalsMismatch, 0), outAnomaly(stream.AnomalyTotalsMismatch, 0),
				outAnomaly(stream.AnomalyTotalsMismatch, 0), outAnomaly(stream.AnomalyTotalsMismatch, 0), outAnomaly(stream.AnomalyMissingSegments, 0, 1, 2, 3), outAudioEnd()}},
		{name: "duplicate and conflicting audio.completed", events: []wire.Event{start(), audioCompleted(0, 0, 0), audioCompleted(0, 0, 0), audioCompleted(1, 0, 0)},
			want:  []stream.Output{outAudioEnd(), outAnomaly(stream.AnomalyConflictingMessage, 0)},
			stats: &stream.Stats{Duplicates: 1}},
		{name: "gaps at the end are skipped", events: []wire.Event{start(),
			chunk(0, 0, 0, 1, 1), chunk(2, 1, 1, 3, 5), chunk(4, 3, 0, 1, 7), chunk(5, 5, 0, 1, 8), audioCompleted(6, 10, 6)},
			// chunkCount, totalBytes and segmentCount differ; durationSeconds is within 1 ms.
			want: []stream.Output{outSeg(0, 44100, 0, 1), outAnomaly(stream.AnomalyTotalsMismatch, 0), outAnomaly(stream.AnomalyTotalsMismatch, 0),
				outAnomaly(stream.AnomalyTotalsMismatch, 0),
				outAnomaly(stream.AnomalyMissingSegments, 0, 2, 4),
				outAnomaly(stream.AnomalyMissingChunks, 1, 0, 2), outSeg(3, 44100, 1, 7), outSeg(5, 44100, 2, 8), outAudioEnd()}},
		{name: "audio without start at the end", events: []wire.Event{chunk(0, 0, 0, 1, 1), chunk(1, 2, 0, 1, 1), audioCompleted(2, 4, 2)},
			want: []stream.Output{outAnomaly(stream.AnomalyMissingAudioStart, 0, 0, 2), outAudioEnd()}},
		{name: "reply.completed ends the audio", events: []wire.Event{start(), chunk(0, 1, 0, 1, 4), completed()},
			want: []stream.Output{outAnomaly(stream.AnomalyMissingAudioCompleted, 0), outAnomaly(stream.AnomalyMissingSegments, 0, 0),
				outSeg(1, 44100, 0, 4), outAudioEnd(), outEnd(stream.End{State: stream.EndCompleted})}},
		{name: "cancelled drops what is held", events: []wire.Event{start(), delta(1, "b"), chunk(1, 0, 1, 2, 1),
			&wire.Cancelled{RequestID: rid, Reason: "requested_by_game"}, delta(0, "a"), completed()},
			want:  []stream.Output{outAudioEnd(), outEnd(stream.End{State: stream.EndCancelled, Reason: "requested_by_game"})},
			stats: &stream.Stats{Late: 2, Chunks: 1, Bytes: 2}},
		{name: "failed keeps the final text", events: []wire.Event{tc,
			&wire.Failed{RequestID: strp(rid), SourceMessageID: "m", Code: "unsupported_voice", Message: "no voice", Retryable: false}},
			want: []stream.Output{outText("abc"),
				outEnd(stream.End{State: stream.EndFailed, Code: "unsupported_voice", Message: "no voice", Final: finalOf(tc)})}},
		{name: "failed without request id", events: []wire.Event{&wire.Failed{Code: "capacity_exceeded", Message: "full", Retryable: true}},
			want: []stream.Output{outEnd(stream.End{State: stream.EndFailed, Code: "capacity_exceeded", Message: "full", Retryable: true})}},
		{name: "wrong request", opts: &stream.Options{RequestID: rid}, events: []wire.Event{
			&wire.TextDelta{RequestID: "other", Delta: "x"}, &wire.Failed{RequestID: strp("other")}, &wire.Cancelled{RequestID: "other"}},
			want: []stream.Output{outAnomaly(stream.AnomalyWrongRequest, 0), outAnomaly(stream.AnomalyWrongRequest, 0), outAnomaly(stream.AnomalyWrongRequest, 0)}},
		{name: "first request id adopted", events: []wire.Event{delta(0, "a"), &wire.TextDelta{RequestID: "other", Sequence: 1, Delta: "x"}},
			want: []stream.Output{outText("a"), outAnomaly(stream.AnomalyWrongRequest, 0)}},
		{name: "unexpected events", events: []wire.Event{nil, (*wire.TextDelta)(nil), (*wire.AudioChunk)(nil), (*wire.Failed)(nil), &wire.CaptureLevel{RequestID: rid}},
			want: []stream.Output{outAnomaly(stream.AnomalyUnexpectedEvent, 0), outAnomaly(stream.AnomalyUnexpectedEvent, 0), outAnomaly(stream.AnomalyUnexpectedEvent, 0),
				outAnomaly(stream.AnomalyUnexpectedEvent, 0), outAnomaly(stream.AnomalyUnexpectedEvent, 0)}},
		{name: "held audio bound", opts: &stream.Options{MaxHeldAudio: 10 * time.Millisecond}, // 441 samples
			events: []wire.Event{start(), chunk(0, 1, 0, 1, make([]int16, 300)...), chunk(1, 2, 0, 1, make([]int16, 100)...), delta(0, "a")},
			want:   []stream.Output{outAudioEnd(), outEnd(stream.End{State: stream.EndFailed, Code: stream.CodeHeldAudioLimit})},
			stats:  &stream.Stats{Late: 1, Chunks: 1, Bytes: 600}},
		{name: "emitted audio does not count against the bound", opts: &stream.Options{MaxHeldAudio: 10 * time.Millisecond},
			events: []wire.Event{start(), chunk(0, 0, 0, 1, make([]int16, 300)...), chunk(1, 1, 0, 1, make([]int16, 300)...)},
			want:   []stream.Output{outSeg(0, 44100, 0, make([]int16, 300)...), outSeg(1, 44100, 300, make([]int16, 300)...)}},
		{name: "held text bound", opts: &stream.Options{MaxHeldText: 100},
			events: []wire.Event{delta(1, "b"), delta(2, strings.Repeat("c", 40))},
			want:   []stream.Output{outEnd(stream.End{State: stream.EndFailed, Code: stream.CodeHeldTextLimit})}},
		{name: "filled gaps give their held bytes back", opts: &stream.Options{MaxHeldText: 100}, // each held delta costs 65
			events: []wire.Event{delta(1, "b"), delta(0, "a"), delta(3, "d"), delta(2, "c")},
			want:   []stream.Output{outText("ab"), outText("abcd")}},
		{name: "sequences listed in a text anomaly are capped", events: []wire.Event{delta(0, "a"), delta(1000, "z"), completed()},
			want: []stream.Output{outText("a"), outAnomaly(stream.AnomalyTextGap, 0, seqRange(1, 33)...), outText("az"),
				outEnd(stream.End{State: stream.EndCompleted})}},
		{name: "sequences listed in a segment anomaly are capped", events: []wire.Event{start(), chunk(0, 1000, 0, 1, 1), audioCompleted(1, 2, 1)},
			want: []stream.Output{outAnomaly(stream.AnomalyMissingSegments, 0, seqRange(0, 32)...), outSeg(1000, 44100, 0, 1), outAudioEnd()}},
		{name: "chunk repeated with longer data conflicts", events: []wire.Event{start(), chunk(0, 0, 0, 2, 1), chunk(0, 0, 0, 2, 1, 2)},
			want: []stream.Output{outAnomaly(stream.AnomalyConflictingChunk, 0, 0)}},
		{name: "held audio bound at the declared rate", opts: &stream.Options{MaxHeldAudio: 10 * time.Millisecond}, // 80 samples at 8 kHz
			events: []wire.Event{&wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 8000, Channels: 1}, chunk(0, 1, 0, 1, make([]int16, 20)...)},
			want: []stream.Output{outAnomaly(stream.AnomalyUnexpectedRate, 0), outAudioEnd(),
				outEnd(stream.End{State: stream.EndFailed, Code: stream.CodeHeldAudioLimit})}},
		{name: "audio held before a lower declared rate", opts: &stream.Options{MaxHeldAudio: 10 * time.Millisecond}, // 441, then 80 samples
			events: []wire.Event{chunk(0, 1, 0, 1, make([]int16, 20)...), &wire.AudioStart{RequestID: rid, Format: "pcm_s16le", SampleRate: 8000, Channels: 1}},
			want: []stream.Output{outAnomaly(stream.AnomalyUnexpectedRate, 0), outAudioEnd(),
				outEnd(stream.End{State: stream.EndFailed, Code: stream.CodeHeldAudioLimit})}},
		{name: "completed text is not held to the text bound", opts: &stream.Options{MaxText: 20},
			events: []wire.Event{delta(0, "abc"), textCompleted(strings.Repeat("z", 50))},
			want:   []stream.Output{outText("abc"), outAnomaly(stream.AnomalyTextMismatch, 0), outText(strings.Repeat("z", 50))}},
		{name: "repeats without requestId are duplicates", events: []wire.Event{start(), &wire.AudioStart{Format: "pcm_s16le", SampleRate: 44100, Channels: 1},
			audioCompleted(0, 0, 0), &wire.AudioCompleted{}},
			want:  []stream.Output{outAudioEnd()},
			stats: &stream.Stats{Duplicates: 2}},
		{name: "text bound", opts: &stream.Options{MaxText: 100},
			events: []wire.Event{delta(0, strings.Repeat("a", 60)), delta(1, strings.Repeat("b", 30))},
			want:   []stream.Output{outText(strings.Repeat("a", 60)), outEnd(stream.End{State: stream.EndFailed, Code: stream.CodeTextLimit})}},
	}
}

func base64Of(b []byte) string { return pcmBytes(b) }

// seqRange returns the integers in [from, to).
func seqRange(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestAssembler_Push(t *testing.T) {
	t.Parallel()
	for _, tt := range assemblerCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mustAssembler(tt.opts)
			var got []stream.Output
			for _, ev := range tt.events {
				a.PushEvent(ev)
				got = append(got, drain(a)...)
			}
			testutil.Equal(t, "outputs", got, tt.want)
			if tt.stats != nil {
				testutil.Equal(t, "stats", a.Stats(), *tt.stats)
			}
			ended := len(got) > 0 && got[len(got)-1].Kind == stream.OutputEnd
			testutil.Equal(t, "Done", a.Done(), ended)
		})
	}
}

// TestAssembler_anomalyBound checks that anomalies a caller does not pop
// are bounded and counted.
func TestAssembler_anomalyBound(t *testing.T) {
	t.Parallel()
	a := mustAssembler(nil)
	for range 1500 {
		a.PushEvent(delta(-1, "x"))
	}
	testutil.Equal(t, "dropped", a.Stats().DroppedAnomalies, 1500-1024)
	testutil.Equal(t, "queued", len(drain(a)), 1024)
	a.PushEvent(delta(-1, "x"))
	testutil.Equal(t, "queued after draining", len(drain(a)), 1)
}

// Issue #17: the Assembler takes messages as the connection delivers
// them, envelope included: the envelope rules are the server's
// (docs/rpengine-protocol.md, "Envelope"), a bad message changes nothing,
// and a valid one that is not part of a reply is an anomaly.
func TestAssembler_Push_raw(t *testing.T) {
	t.Parallel()
	env := func(typ, fields string) []byte {
		return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"` + typ + `","messageId":"m","timestamp":"t"` + fields + `}`)
	}
	a := mustAssembler(nil)
	for _, bad := range []struct{ name, msg, err string }{
		{"not json", `hello`, "stream: push: not a JSON object"},
		{"other protocol", strings.Replace(string(env("reply.text.delta", "")), "gemtavern.rp_engine", "x", 1), `stream: push: unsupported protocol: "x"`},
		{"version 2", strings.Replace(string(env("reply.text.delta", "")), `:3,`, `:2,`, 1), "stream: push: unsupported protocol version: 2"},
		{"no messageId", strings.Replace(string(env("reply.text.delta", "")), `"m"`, `""`, 1), "stream: push: missing required envelope field: messageId"},
		{"mistyped field", string(env("reply.text.delta", `,"sequence":"one"`)), `stream: push "reply.text.delta": json: cannot unmarshal`},
	} {
		err := a.Push([]byte(bad.msg))
		if err == nil || !strings.HasPrefix(err.Error(), bad.err) {
			t.Errorf("%s: error %v, want one starting %q", bad.name, err, bad.err)
		}
	}
	testutil.Equal(t, "nothing changed", drain(a), []stream.Output(nil))
	testutil.Success(t, a.Push(env("capacity.update", `,"queueDepth":1,"queueLimit":20,"acceptingRequests":true`)))
	testutil.Success(t, a.Push(env("reply.text.delta", `,"requestId":"r1","sequence":0,"delta":"Hi."`)))
	testutil.Success(t, a.Push(env("reply.completed", `,"requestId":"r1","modalities":["text"]`)))
	testutil.Equal(t, "outputs", drain(a), []stream.Output{outAnomaly(stream.AnomalyUnexpectedEvent, 0), outText("Hi."),
		outEnd(stream.End{State: stream.EndCompleted})})
}

// Issue #17: a negative bound is a *BoundsError; bounds cannot be
// disabled.
func TestNewAssembler_config(t *testing.T) {
	t.Parallel()
	for _, o := range []stream.Options{{MaxHeldAudio: -1}, {MaxHeldText: -1}, {MaxText: -1}} {
		_, err := stream.NewAssembler(&o)
		var ce *stream.BoundsError
		testutil.ErrorAs(t, err, &ce)
	}
}
