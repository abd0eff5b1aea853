// Package xiaotangyuan is a game adapter client for the XiaoTangYuan
// (小汤圆) companion's game protocol v1.1: the game connects to the local
// Harness at ws://127.0.0.1:32145, sends the player's text and structured
// state, receives the companion's streamed replies, and exposes game
// abilities ("atoms") the companion can call.
//
//	c, err := xiaotangyuan.New(&xiaotangyuan.Options{AdapterID: "my-adapter", GameID: "mygame", Version: "1.0.0"})
//	err = c.Connect(ctx)                             // adapter.hello; reconnects by itself
//	go func() { for ev := range c.Events() { show(ev) } }() // or c.Next(ctx), or c.Poll each frame
//	reply, err := c.Chat(ctx, "Where is the key?", nil)
//	c.Close()
//
// This is the shape of every client in the module (neuro, neurosan too):
// New with an Options struct (nil for defaults) starts nothing; Connect
// makes the first connection; events are received with Events, Next or
// Poll; Close stops everything. Register atoms with [Client.HandleAtom]
// before Connect.
//
// # Protocol
//
// JSON-RPC 2.0, one object per WebSocket text frame, in both directions:
// the adapter calls adapter.hello, chat.send, chat.retry,
// assistant.compose, state.update, voice.start, voice.stop and
// gateway.ping; the Harness sends assistant.* notifications and calls
// game.atom.execute. The client uses its own integer ids; the Harness uses
// UUID strings.
//
// The hello is a request (never a notification, as one reference adapter
// sends it), sent once per connection, with protocolVersion "1.1",
// processId (this process unless Options.ProcessID says otherwise), the
// optional saveId, and capabilities: "assistant.text-stream" always (so
// the Harness never sends the legacy assistant.delta) plus every atom
// registered with [Client.HandleAtom]. Because the hello is once per
// connection, [Client.SetSaveID] reconnects to change the save slot.
//
// Streamed replies go through an [Assembler] keyed by interactionId: each
// delta's cumulative text replaces the displayed text, a text that does
// not extend the previous one is a model step reset (Event.StepReset),
// text.done and the RPC result are authoritative, and events for an
// interaction cancelled by a barge-in are dropped, although the gateway
// re-sends text.start for it. The chat result still arrives, marked
// [Reply].Cancelled.
// Events of a chat the game abandoned (see [Client.Chat]) are dropped
// too.
//
// # Interrupting a chat
//
// In protocol v1.1 a game cannot cancel a request it sent: there is no
// cancel method, and the Harness runs one message at a time per
// connection, so everything sent after a chat.send (another chat,
// gateway.ping, state.update, voice.start) waits until that chat is done.
// Only two things cut a pending chat short: the player pressing the
// Harness media host's own push-to-talk key (a barge-in: EventCancel with
// Reason "barge-in", and the chat still ends with its reply, marked
// [Reply].Cancelled), and the connection closing. [Client.StartVoice]
// does not: voice.start waits behind the chat like everything else.
//
// What a game should do instead: keep one chat in flight and show that
// the companion is thinking. If the player moves on, abandon the chat by
// cancelling Chat's ctx: Chat returns at once, and the client keeps the
// chat's later events off [Client.Events] and drops its reply (see
// [Client.Chat]); the next request still waits until the Harness has
// finished the abandoned one. If nothing may wait (the player quit to the
// title screen or loaded another save), call [Client.SetSaveID] with the
// new save, or "" for none: it reconnects at once, and the new connection
// has its own queue; or Close the client and make a new one. Either way
// the Harness starts a fresh chat session (its long-term memory, kept per
// game and save, stays). docs/xiaotangyuan-protocol.md has the details.
//
// Every outbound message is checked against [MaxMessageSize] (1 MiB)
// before it is sent ([ErrMessageTooBig]): the real gateway closes the
// connection with 1009 and its process crashes on a bigger frame. The
// gateway limits nothing it sends, so the client reads up to 4 MiB by
// default (Options.ReadLimit).
//
// # Concurrency
//
// All Client methods may be called concurrently. Each connection has a
// reader goroutine, a reply writer, a WebSocket pinger, an optional
// state heartbeat and one goroutine per running atom (at most
// Options.MaxInFlight; more are refused with "adapter busy"); with
// Options.Recorder, one more goroutine of the client's writes the
// recording. Atom
// handlers run while the game's own chat.send is pending, which is how
// the Harness uses them. The reader never writes: events go to a bounded
// queue (Options.MaxEvents; dropped and counted when full) that the game
// receives from with [Client.Events], [Client.Next] or [Client.Poll], and
// its own answers to another, of 64 answers and 1 MiB, for which it waits
// when full, so that every Harness request gets one answer. No lock is
// held while user code runs. [Client.Close] joins every goroutine.
//
// Liveness uses WebSocket ping frames, not gateway.ping: the gateway
// processes each connection's requests strictly in order, so
// gateway.ping waits behind a running chat. A lost connection fails
// pending calls with a [*DisconnectError] (errors.Is ErrDisconnected) and
// the client reconnects with doubling back-off (Options.ReconnectMin and
// ReconnectMax, 2 s to 30 s by default); the first failed attempt of an
// outage is logged (Options.Logger). Calls made while disconnected fail
// at once rather than wait; after Close they fail with [ErrClosed].
//
// # Security
//
// The Harness is an unauthenticated local service that binds loopback
// and checks no Origin, so the client only dials ws:// on 127.0.0.1,
// localhost or ::1 (ports 1024-65535), like the Harness's own config,
// and follows no redirect of the handshake (the Harness sends none).
// saveId values are opaque: [SaveID] hashes a game's save name with
// SHA-256 so that paths and account names never leave the process.
//
// The fake Harness for tests is in package xtytest.
// docs/xiaotangyuan-protocol.md says how the real gateway behaves, and
// where each fact comes from.
package xiaotangyuan
