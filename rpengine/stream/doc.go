// Package stream assembles the reply stream of an RPEngine engine
// (protocol gemtavern.rp_engine v3; this project's notes on it are
// docs/rpengine-protocol.md) into what a game shows and plays: display
// text that grows as it streams, each sentence's audio as soon as it is
// whole, the end of the audio, and a clear end.
//
// Package rpengine does this for every reply it serves; use stream
// directly only with a transport of your own. An [Assembler] serves one
// reply. Push it every message of the reply as the connection delivers
// it, and pop results with [Assembler.Next]:
//
//	a, err := stream.NewAssembler(&stream.Options{RequestID: id})
//	err = a.Push(msg) // one engine message, envelope included
//	for out, ok := a.Next(); ok; out, ok = a.Next() {
//		switch out.Kind {
//		case stream.OutputText:     // subtitles: out.Text is the whole text so far
//		case stream.OutputSegment:  // play out.Segment.Samples at out.Segment.SampleRate
//		case stream.OutputAudioEnd: // no segment follows: end the speech
//		case stream.OutputAnomaly:  // log out.Anomaly; the reply goes on
//		case stream.OutputEnd:      // completed, cancelled or failed (out.End)
//		}
//	}
//
// # Protocol
//
// A message is one JSON object whose envelope (protocol, protocolVersion
// 3, type, messageId, timestamp) is checked as the game's server checks
// it; a message that is not valid is an error of Push and changes
// nothing.
//
// Text: reply.text.delta carries a 0-based sequence. The display text is
// the deltas in sequence order up to the first gap; deltas after a gap are
// held until it fills. Exact duplicates are ignored; a repeated sequence
// with another delta is an [AnomalyConflictingDelta] and the first is kept.
// reply.text.completed is the final word: when it differs from the
// assembled deltas it replaces them and an [AnomalyTextMismatch] is
// reported; its token count, time and extracted content are kept in
// [End].Final. If the reply ends without it, the gaps are reported
// ([AnomalyTextGap]) and skipped. With buffered response processing the
// engine sends no delta at all, only the completed text.
//
// Audio: reply.audio.chunk carries a global sequence, its sentence
// (segmentSequence), its place in the sentence (segmentChunkSequence) and
// the sentence's chunk count (segmentChunkCount). A [Segment] is emitted
// when all its chunks are in and every earlier segment was emitted or
// skipped: segment 2 waits for segment 1. Samples are decoded from base64
// PCM16 little-endian and carry the rate declared by reply.audio.start
// (44100 Hz expected; another rate is passed through and reported as
// [AnomalyUnexpectedRate], never resampled). Each segment has its
// Duration and its Offset within the reply's emitted audio. At
// reply.audio.completed (or at reply.completed without it) the totals are
// checked and every segment or chunk still missing is reported and
// skipped, so that every later complete segment is still emitted, in
// order; then [OutputAudioEnd] says that no segment follows. A player
// needs that to play its last milliseconds, as nothing in a segment says
// it is the last; a reply that ends in the middle of its audio gets it
// just before its End.
//
// Checks: every inconsistency (totals, missing chunks or segments,
// oversized or odd chunk data, disagreeing segmentChunkCount, conflicting
// duplicates, stale chunks, wrong requestId, ...) is an [Anomaly] of a
// typed [AnomalyKind] with the sequence numbers involved. Anomalies never
// end a reply; the assembler keeps what is consistent and drops the rest.
// Nothing panics on any input (a fuzz target checks it).
//
// End: reply.completed gives [EndCompleted], reply.cancelled
// [EndCancelled] with its reason, request.error [EndFailed] with its code,
// message and retryable flag. Everything held is dropped at the End; later
// messages are counted in [Stats].Late and dropped.
//
// Bounds: the audio and text held back waiting for a gap are bounded by
// [Options] (30 s of audio, 1 MiB of held text, 4 MiB of text by default).
// Past a bound the reply ends as [EndFailed] with a local code
// ([CodeHeldAudioLimit], [CodeHeldTextLimit], [CodeTextLimit]) instead of
// growing. Emitted segments belong to the caller, so a reply may run for
// as long as the engine talks.
//
// # Performance
//
// A reply.audio.chunk is decoded from the message text without
// encoding/json, and an in-order chunk of a known segment straight into
// the segment's sample buffer, sized from the segment's first chunk: Push
// allocates nothing for it (a test pins it). Each segment allocates its
// own buffer once, because the caller keeps the samples. The display text
// is append-only, so every text output shares it rather than copying it: a
// reply of n deltas costs O(n), not O(n²).
//
// # Concurrency
//
// An Assembler is a passive value: no goroutines, no locks, no clock, no
// logging. It is not safe for concurrent use; the goroutine that reads
// the connection usually owns one per reply and hands the outputs on.
// Drain Next after every Push: only anomalies are bounded in the output
// queue (1024 pending; more are counted in [Stats].DroppedAnomalies).
//
// # Security
//
// The engine is a local but untrusted peer. Numbers are validated before
// use, chunk data is limited to 32 KiB decoded as the protocol states, the
// capacity reserved from a peer's numbers is capped by the held-audio
// bound over all pending segments together, and what the assembler holds
// is bounded as above.
package stream
