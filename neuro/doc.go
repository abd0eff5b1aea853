// Package neuro lets Neuro-sama play your game through the Neuro game API.
// The game declares actions (a name, a description, a JSON schema for
// their data), tells her what happens (context), and forces her to choose
// when it is her turn; the SDK checks each of her choices against the
// schema and the game's validator, answers it, and then executes it where
// the game receives events.
//
//	c, err := neuro.New("Tic-Tac-Toe", &neuro.Options{Prefix: "tictactoe_"}) // URL: $NEURO_SDK_WS_URL
//	type move struct{ Cell int `json:"cell"` }
//	err = c.Register(neuro.Action{
//		Name: "place_o", Description: "Place your O on a free cell (1-9).",
//		Schema: neuro.Object(map[string]neuro.Schema{"cell": neuro.Integer().Range(1, 9)}, "cell").JSON(),
//		Validate: neuro.Bind(func(ctx context.Context, m move) neuro.Result {
//			if taken(m.Cell) {
//				return neuro.Fail("cell taken; free cells: 2, 5") // she retries
//			}
//			return neuro.OK("")
//		}),
//		Execute: func(inv *neuro.Invocation) { place(inv.Value.(move)) },
//	})
//	err = c.Connect(ctx)                                     // startup and the actions; reconnects by itself
//	go func() { for ev := range c.Events() { show(ev) } }() // Execute runs here; or c.Poll each frame
//	h, err := c.Force(neuro.Force{Query: "Your turn.", Actions: []string{"place_o"}}, neuro.ForceRefuse)
//	outcome, err := h.Wait(ctx) // completed, superseded, cancelled, timed out
//	c.Close()
//
// This is the shape of every client in the module: [New] starts nothing,
// [Client.Connect] connects, events come from [Client.Events],
// [Client.Next] or [Client.Poll] (a game loop polls once per frame, so
// Execute runs on its main thread), and [Client.Close] stops everything.
// Unknown actions and bad data are answered for the game, telling her what
// to do instead. [Client.Window] groups actions for one decision, as the
// official SDKs' ActionWindow does; [LintSchema] checks a schema; package
// neurotest is a fake server. docs/neuro.md is the guide: how the SDK
// works, testing, and what was checked against Randy, the official mock.
//
// # Protocol
//
// The Neuro game API, with the startup acknowledgement, priorities and
// speech_finished of 2025-2026 and the shutdown and reregister_all
// proposals: JSON in WebSocket text frames, the game being the client of
// $NEURO_SDK_WS_URL or [DefaultURL]. Every connect sends startup, then the
// whole action set; one force at a time. docs/neuro-protocol.md records
// how the server and Randy behave, and where each fact comes from.
//
// # Concurrency
//
// All [Client] methods may be called concurrently; receive events from one
// goroutine. Execute and a window's conditions run on that goroutine, with
// no lock held. Every queue is bounded ([Options] says what happens when
// one is full); [Client.Close] stops and joins every goroutine it started.
//
// # Security
//
// The Neuro server is unauthenticated and may be remote. Her data is
// untrusted input, validated before the game sees it; messages are limited
// to 4 MiB ([Options].ReadLimit); schemas may not load external references;
// a binary frame, or a text frame that is not UTF-8, closes the connection;
// the handshake follows no redirect; her text quoted back to her is clipped.
package neuro
