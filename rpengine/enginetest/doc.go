// Package enginetest is a fake RPEngine, as net/http/httptest is to
// servers: it dials a game server over loopback WebSocket, or in memory
// through a [Listener], with an allowed Origin, does the hello/welcome handshake, acks, validates every
// game message the way upstream's engine does (envelope, fields, Character
// Card V2 validation, card hashes; invalid_payload without an ack), keeps
// a per-session card cache (snapshot, patch, reference), advertises
// capacity, and answers requests with scripted or generated replies: text
// deltas and 44.1 kHz PCM16 speech, one segment per sentence, in chunks of
// at most 32 KiB.
//
//	eng, err := enginetest.Dial(ctx, server.SocketURL(), nil)
//	defer eng.Close()
//	// ... the game's code under test talks to server ...
//	msg, err := eng.WaitType(ctx, "reply.request")
//
// # In memory
//
// The engine dials the game, so the fake is a client; its in-memory
// mode is a listener for the game server and the client that reaches it.
// A [Listener] is a net.Listener for rpengine.Server.Serve that opens no
// port (it reports 127.0.0.1:38471, so the server's loopback and Host
// checks apply as over TCP), and [Listener.Client], passed as
// Options.HTTPClient, connects the engine to it:
//
//	l := enginetest.NewListener()
//	go server.Serve(l)
//	defer server.Close()
//	eng, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
//
// Created inside a testing/synctest bubble, the server and the engine run
// on the bubble's fake clock: a handshake or idle timeout, or a Delay
// fault, takes no real time, and synctest.Wait lets a test check that
// nothing happened (a request held while the engine is full) without
// sleeping. [Listener.Dial] gives a raw connection, for tests that write
// bytes by hand.
//
// [DialMailbox] is the same engine over the file mailbox (the game's
// ServerOptions.Mailbox folder, docs/rpengine-protocol.md): it reads and
// removes the game's files, writes its own (temporary name, rename,
// .ready marker), removes them once acked, merges text deltas within
// 120 ms, keeps only the newest level sample per 250 ms, and speaks each
// sentence into an audio slot (reply.audio.segment), restoring the silent
// placeholder when the game answers reply.audio.segment.consumed. So the
// same tests run over both transports. [Engine.LooseEnds] counts what
// the game left unsettled: messages unacknowledged, segments not given
// back.
//
// # Agreement with the engine
//
// Where the real engine was measured (docs/rpengine-protocol.md), the fake
// fails where it fails, so a game's tests catch what the engine would
// refuse:
//
//   - output.responseProcessing is checked as the engine checks it
//     (matcher.flags is a string of distinct letters of "ims"; an array is
//     invalid_payload). In that buffered mode no reply.text.delta is sent,
//     the rules run over the whole reply, and reply.text.completed carries
//     the processed text and extractedContent.
//   - The queue limit (Options.QueueLimit, 20 as upstream) counts queued,
//     active and capturing requests; past it a request gets a retryable
//     capacity_exceeded before its card is looked at.
//   - reply.audio.completed carries the same totals on both transports:
//     segmentCount, totalBytes of PCM, chunkCount as the sum over segments
//     of ceil(bytes / 32768), durationSeconds. In file mode
//     reply.audio.start is sent only when nothing was spoken.
//   - welcome is acked like any other message.
//
// # Faults
//
// [Faults] injects what real engines and networks do: delays, duplicated
// messages, dropped acks, forced card_resync_required, full capacity, any
// request.error code, cancellation racing completion, disconnect after N
// messages, silence, and upstream's own card hashing ([UpstreamHash]),
// which differs from RFC 8785 for numbers such as 1.0 and 1e21.
// [Engine.Reconnect] starts a new session, [Engine.Send] and
// [Engine.SendRaw] send anything.
//
// # Concurrency
//
// All Engine methods may be called concurrently. Each connection runs a
// reader and a worker goroutine (requests are answered FIFO, as upstream),
// and over WebSocket a writer: the reader never blocks on a write, as a
// browser's send never does (its messages are queued, at most 4096).
// Disconnect, Reconnect and Close wait for them to end.
package enginetest
