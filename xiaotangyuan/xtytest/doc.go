// Package xtytest is a fake XiaoTangYuan Harness (the game protocol v1.1
// gateway) for testing adapters, in particular package xiaotangyuan, in
// the shape of net/http/httptest:
//
//	srv := xtytest.NewServer(nil) // started; NewUnstartedServer + Start to start later
//	defer srv.Close()
//	c, err := xiaotangyuan.New(&xiaotangyuan.Options{URL: srv.URL, HTTPClient: srv.Client(), ...})
//
// The name follows the convention of net/http/httptest and the
// project's rpengine/enginetest: the package it tests plus "test". The
// protocol's own short name, XTY, keeps it short; "xiaotangyuantest"
// would be the longest import name in the module, for no gain.
//
// # Protocol
//
// The fake's defaults are the real gateway's observable behaviour, faults
// included, as read in the gateway's source and seen running it
// (docs/xiaotangyuan-protocol.md in this repository says which and where):
// gateway.ready on connect; the hello rules (request or notification,
// once per successful hello, failed hellos retryable, protocolVersion not
// checked); params read as the gateway reads them (a member set to null
// is given and is not an object, so context: null is refused with
// "params must be an object"; optional strings that are not strings are
// ignored; saveIds are trimmed, and a blank one counts as absent); -32700
// with id null for non-JSON, arrays, a wrong jsonrpc, a missing method, a
// bad id type, and any response it is not waiting for; -32000 with text
// for every other failure, including "unknown method"; every message of a
// connection, gateway.ping, voice.start and notifications included,
// processed strictly after the one before it, while responses to its own
// game.atom.execute calls bypass the queue; the stream sequences of
// chat.send (start, deltas, done, result), chat.retry (… done, present,
// result), assistant.compose (no notifications), voice (cancel,
// recording, thinking, thinking with transcript, start, deltas, present,
// done), barge-in (cancel without interactionId, and start re-sent for
// the cancelled interaction), and proactive replies (present then done,
// no start); the 80 ms delta coalescing with sentence-end flushes and
// step resets; legacy assistant.delta only to an adapter that did not
// declare assistant.text-stream; no limit on what it sends; and a message
// over 1 MiB closing its connection with 1009 and then bringing the whole
// Harness down, as it kills the gateway process.
//
// An [Agent] function scripts the model: it streams chunks, changes step,
// calls the adapter's atoms (with any arguments, as the gateway's skills
// do once earlier results are filled in) and barges in.
//
// # Concurrency
//
// All Server methods may be called concurrently. [Server.Client]
// connects over in-memory pipes, so a Server created inside a
// testing/synctest bubble runs on the bubble's fake clock (15 s atom
// timeouts and 80 ms coalescing take no real time). [Server.Close] joins
// every goroutine. Each connection's request queue is bounded (256); a
// client overflowing it is closed with 1008.
//
// # Security
//
// The server opens no port unless [Options].Addr asks for one, and then
// binds loopback addresses only.
package xtytest
