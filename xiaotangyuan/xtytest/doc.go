// Package xtytest is a fake XiaoTangYuan Harness (the game protocol v1.1
// gateway) for testing adapters, in particular package xiaotangyuan.
//
// The name follows the convention of net/http/httptest and the
// project's rpengine/enginetest: the package it tests plus "test". The
// protocol's own short name, XTY, keeps it short; "xiaotangyuantest"
// would be the longest import name in the module, for no gain.
//
// # Protocol
//
// The fake reproduces the gateway's observable behaviour (spec §2.1-2.4):
// gateway.ready on connect; the hello rules (request or notification,
// once per successful hello, failed hellos retryable, protocolVersion not
// checked); -32700 with id null for non-JSON, arrays, a wrong jsonrpc, a
// missing method, a bad id type, and any response it is not waiting for;
// -32000 with text for every other failure, including "unknown method";
// requests processed strictly in order per connection while responses to
// its own game.atom.execute calls bypass the queue; the stream sequences
// of chat.send (start, deltas, done, result), chat.retry (… done,
// present, result), assistant.compose (no notifications), voice (cancel,
// recording, thinking, thinking with transcript, start, deltas, present,
// done), barge-in (cancel without interactionId, and start re-sent for
// the cancelled interaction), and proactive replies (present then done,
// no start); and the 80 ms delta coalescing with sentence-end flushes and
// step resets.
//
// An [Agent] function scripts the model: it streams chunks, changes step,
// calls the adapter's atoms and barges in. [Quirks] switch on the real
// gateway's faults: gateway.ping queued behind a running chat, duplicate
// legacy deltas, and the whole process dying on an oversize message.
//
// # Concurrency
//
// All Harness methods may be called concurrently. [Harness.HTTPClient]
// connects over in-memory pipes, so a Harness created inside a
// testing/synctest bubble runs on the bubble's fake clock (15 s atom
// timeouts and 80 ms coalescing take no real time). [Harness.Close] joins
// every goroutine. Each connection's request queue is bounded (256); a
// client overflowing it is closed with 1008.
//
// # Security
//
// [Harness.Listen] binds loopback addresses only.
package xtytest
