// Package enginetest is a fake RPEngine for a game's tests, as
// net/http/httptest is to servers: the engine dials the game's server
// (over loopback WebSocket, in memory through a [Listener], or through the
// file mailbox with [DialMailbox]), does the handshake, validates and acks
// every game message as the real engine does, and answers requests with
// scripted or generated replies: text deltas and 44.1 kHz PCM16 speech,
// one segment per sentence.
//
//	l := enginetest.NewListener() // no port; reports 127.0.0.1:38471
//	go server.Serve(l)
//	defer server.Close()
//	eng, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()}) // or (server.SocketURL(), nil) over loopback
//	defer eng.Close()
//	// ... the game's code under test talks to server ...
//	msg, err := eng.WaitType(ctx, "reply.request")
//
// Created inside a testing/synctest bubble, the server and the engine run
// on the bubble's fake clock: a timeout or a Delay fault takes no real
// time, and synctest.Wait shows that nothing happened without sleeping.
// [Options].Responder scripts the replies; [Faults] injects what real
// engines and networks do (delays, duplicates, dropped acks, forced
// card_resync_required, full capacity, any request.error code, a cancel
// racing completion, disconnects, silence, upstream's card hashing);
// [Engine.Reconnect] starts a new session, [Engine.Send] and
// [Engine.SendRaw] send anything, and [Engine.LooseEnds] counts what the
// game left unsettled. How the fake works and what it reproduces:
// docs/enginetest.md.
//
// # Protocol
//
// RPEngine protocol v3 (docs/rpengine-protocol.md). Where the real engine
// was measured, the fake fails where it fails (Character Card V2 rules,
// card hashes, buffered response processing, the queue limit of 20, the
// totals of reply.audio.completed), so a game's tests catch what the
// engine would refuse. It keeps a card cache per session and speaks the
// same over both transports.
//
// # Concurrency
//
// All Engine methods may be called concurrently. Each connection runs a
// reader and a worker goroutine (requests are answered FIFO, as
// upstream), and over WebSocket a writer; Disconnect, Reconnect and Close
// wait for them to end.
package enginetest
