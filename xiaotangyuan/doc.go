// Package xiaotangyuan makes a game an adapter of the XiaoTangYuan (小汤圆)
// companion, through its game protocol v1.1: the game connects to the
// Harness on the player's machine, sends the player's text and what is
// happening in the game, shows the companion's replies as they stream in,
// and offers game abilities ("atoms") the companion can call.
//
//	c, err := xiaotangyuan.New(&xiaotangyuan.Options{AdapterID: "my-adapter", GameID: "mygame", Version: "1.0.0"})
//	c.HandleAtom("mygame.open_door", openDoor)           // before Connect, which declares it
//	err = c.Connect(ctx)                                 // adapter.hello; reconnects by itself
//	go func() {
//		for ev := range c.Events() { // or c.Next(ctx), or c.Poll each frame
//			if ev.Kind == xiaotangyuan.EventText {
//				bubble.SetText(ev.Text) // replace, never append
//			}
//		}
//	}()
//	reply, err := c.Chat(ctx, "Where is the key?", nil)
//	c.Close()
//
// This is the shape of every client in the module: [New] starts nothing,
// [Client.Connect] makes the first connection, events come from
// [Client.Events], [Client.Next] or [Client.Poll], and [Client.Close] stops
// everything. Register atoms with [Client.HandleAtom] before Connect.
// [SaveID] turns a save slot into the opaque id the Harness keeps memory
// by, and [Client.SetSaveID] switches it. Package xtytest is a fake Harness
// for tests. docs/xiaotangyuan.md is the guide: how the client works, what
// a game does while a chat is pending, and testing.
//
// # Protocol
//
// JSON-RPC 2.0, one object per WebSocket text frame, both ways, on
// ws://127.0.0.1:32145 ([DefaultURL]): the game calls adapter.hello (a
// request, once per connection), chat.send, chat.retry, assistant.compose,
// state.update, voice.start, voice.stop and gateway.ping; the Harness sends
// assistant.* notifications and calls game.atom.execute. An [Assembler]
// turns the stream notifications into [Event] values: each text replaces
// the one shown, and the [Reply] of a call is authoritative. The Harness
// runs one request at a time per connection and v1.1 cannot cancel one, so
// everything sent during a chat waits for it (see [Client.Chat]). Every
// message sent is checked against [MaxMessageSize] (1 MiB), which the
// Harness crashes past; the client reads up to 4 MiB ([Options].ReadLimit).
// docs/xiaotangyuan-protocol.md says how the real gateway behaves, and where
// each fact comes from.
//
// # Concurrency
//
// All [Client] methods may be called concurrently. Atom handlers run on
// goroutines of their own while the game's chat is pending, as the Harness
// uses them; no lock is held while user code runs. Every queue is bounded,
// and the bound's doc ([Options], [Client.Chat]) says what happens at it.
// [Client.Close] joins every goroutine the client started.
//
// # Security
//
// The Harness is an unauthenticated local service that binds loopback and
// checks no Origin, so the client dials only ws:// on 127.0.0.1, localhost
// or ::1 (ports 1024-65535) and follows no redirect of the handshake.
// saveId values are opaque: [SaveID] hashes a save's name with SHA-256, so
// that paths and account names never leave the process.
package xiaotangyuan
