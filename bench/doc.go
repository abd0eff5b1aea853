// Package bench holds the project's benchmarks against reference
// implementations, measured side by side in one run so that a noisy
// machine still gives honest ratios.
//
// Run everything and get one markdown table with ratios:
//
//	bench/run            # -count 6, with the C and Node.js references
//
// The benchmarks, all with b.ReportAllocs:
//
//   - BenchmarkHash: card.Parse (canonical RFC 8785 hash) of generated small
//     (~2 KB), typical (~10 KB, lorebook) and large (~1 MB, 2000-entry
//     lorebook) cards, cold (bytes never seen) and Card.Hash of a parsed
//     card, against
//     gowebpki/jcs.Transform + SHA-256, SHA-256 alone over the canonical
//     bytes (the floor) and, from bench/run, Node.js with the npm
//     canonicalize package (bench/node).
//   - BenchmarkPlan: card.Planner choosing and verifying a patch for a
//     one-field edit of the typical card.
//   - BenchmarkReplyPCM: raw reply.audio.chunk text to samples queued for
//     playback, with stream.Assembler.Push against encoding/json + base64.
//   - BenchmarkCapture: 48 kHz stereo float to a base64 16 kHz s16le
//     event.audio payload.
//   - BenchmarkResampler: audio.Resampler at 48 and 44.1 to 16 kHz with quality
//     metrics; with -tags srcref (cgo) also speexdsp q3/q5, soxr HQ and
//     libsamplerate best through the same harness. bench/run runs it a
//     second time with -tags purego for the pure-Go path.
//   - BenchmarkPlaybackLatency: the game-added playback latency, from a
//     chunk message in memory to its first sample taken by a device (an
//     audio.Mixer read every 10 ms), p50 and p99.
//   - BenchmarkLoopback: rpengine.Server and an enginetest engine over
//     loopback WebSocket: chunk send to samples queued (p50/p99), and
//     chunk messages per second.
//   - BenchmarkScale<Name>: how a path's cost grows with its input, with
//     sub-benchmarks n=<N> at n, 4n and 16n; bench/report prints
//     t(16n)/t(n) for each (target: at most 20). scale_card_test.go has
//     card.ApplyPatch of n operations and card.Diff of n-element arrays;
//     a package adds its own in scale_<pkg>_test.go.
//
// Besides ns/op every benchmark reports cpu-ns/op, the process's CPU time
// (user + system, all threads, garbage collector included) per operation:
// on a shared, loaded machine wall time mostly measures the other tenants,
// CPU time much less so, and the table gives both ratios.
//
// Nothing here runs without -bench: the package's only tests check the
// harness itself (metrics on known signals), in well under a second.
package bench
