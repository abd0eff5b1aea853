// Package stream assembles the reply stream of an RPEngine engine into
// what a game shows and plays: display text that grows as it streams,
// each sentence's audio as soon as it is whole, the end of the audio, and
// a clear end.
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
// A message that is not valid is an error of Push and changes nothing.
// Text arrives in order whatever order the deltas came in; a [Segment] is
// emitted once all its chunks are in and every earlier segment was
// emitted or skipped. Every inconsistency of the engine's (gaps, missing
// chunks, wrong totals, conflicting duplicates, ...) is an [Anomaly] of a
// typed [AnomalyKind]: anomalies never end a reply. How the text, the
// audio and the checks work: docs/stream.md.
//
// # Protocol
//
// RPEngine protocol v3 (gemtavern.rp_engine; this project's notes are
// docs/rpengine-protocol.md): reply.text.delta, reply.text.completed,
// reply.audio.start, reply.audio.chunk (base64 PCM16 little-endian,
// 44.1 kHz expected, never resampled), reply.audio.completed, and the
// reply's end: reply.completed, reply.cancelled or request.error.
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
// bound over all pending segments together, and the audio and text held
// back waiting for a gap are bounded by [Options] (30 s of audio, 1 MiB of
// held text, 4 MiB of text by default): past a bound the reply ends as
// [EndFailed] with a local code ([CodeHeldAudioLimit], [CodeHeldTextLimit],
// [CodeTextLimit]) instead of growing. Nothing panics on any input.
package stream
