// Package enginetest is a fake RPEngine, as net/http/httptest is to
// servers: it dials a game server over real loopback WebSocket with an
// allowed Origin, does the hello/welcome handshake, acks, validates every
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
// [DialMailbox] is the same engine over the file mailbox of spec section
// 7 (the game's ServerOptions.Mailbox folder): it reads and removes the
// game's files, writes its own (temporary name, rename, .ready marker),
// removes them once acked, merges text deltas within 120 ms, keeps only
// the newest level sample per 250 ms, and speaks each sentence into an
// audio slot (reply.audio.segment), restoring the silent placeholder when
// the game answers reply.audio.segment.consumed. So the same tests run
// over both transports.
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
// reader and a worker goroutine (requests are answered FIFO, as upstream);
// Disconnect, Reconnect and Close wait for them to end.
package enginetest
