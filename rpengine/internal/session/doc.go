// Package session is the game side of one RPEngine engine session
// (docs/rpengine-protocol.md) as a passive value, in the manner of a
// sample builder: engine messages and the current time go in; the
// messages to send, each reply's events, the engine's decisions on the
// requests, capacity changes, log lines and the next timer deadline come
// out. It starts no goroutine, takes no lock, reads no clock and does no
// I/O, so its tests are tables of messages in and messages out.
//
// One goroutine per connection owns a Session (package rpengine's conn):
// it calls Receive for each engine message, Tick when Deadline passes,
// and the request methods on behalf of the game's calls, and after each
// call drains Next. Nothing a Session returns is shared with it, except
// that an OutAck's AckID aliases the message just received.
//
// What it does: the welcome, acks and the duplicate window; tracking of
// outbound messages (ack timeout, invalid_payload attribution); the
// capacity gate (gate.go); each reply's stream through stream.Assembler,
// a capture's status and file mode's whole segments (reply.go,
// totals.go); character syncs (sync.go); idle timeouts. What it does not:
// encoding requests (the game's goroutine does, as a card snapshot can
// take milliseconds), card planning, writing, and the consumer's side of
// a reply (package rpengine's Reply).
package session
