// Package neuro is a client SDK for the Neuro-sama game API: a game
// registers actions with JSON schemas, describes what happens (context),
// forces a choice when it is Neuro's turn, and answers each of her actions
// with a result.
//
//	c, err := neuro.New("Tic-Tac-Toe", nil)                  // URL: $NEURO_SDK_WS_URL
//	err = c.Connect(ctx)                                      // startup and the action set; reconnects by itself
//	go func() { for ev := range c.Events() { show(ev) } }() // or c.Next(ctx), or c.Poll each frame
//	err = c.ContextSilent("The game started.")
//	c.Close()
//
// This is the shape of every client in the module (xiaotangyuan, neurosan
// too): New with an Options struct (nil for defaults) starts nothing;
// Connect makes the first connection; events are received with Events,
// Next or Poll; Close stops everything. Declare actions before or after
// Connect: the SDK registers them either way.
//
// The SDK makes the hard parts hard to get wrong:
//
//   - Every connect (not once per process, as the official SDKs do) sends
//     startup, then one actions/register with the whole current action set.
//     Reconnects back off exponentially from 3 s to 30 s, and a server that
//     is down produces one [Disconnected] and one logged [DialError] per
//     outage.
//     Action ids belong to a connection (a restarted server counts from "0"
//     again). An actions/reregister_all is answered with the whole set,
//     unless it crossed the one sent on connect (Randy sends one on every
//     connection).
//   - The game declares its actions ([Client.Register], [Client.SetActions]);
//     the SDK sends minimal register/unregister diffs, refuses a second,
//     different definition of a name locally ([ConflictError]: the server
//     keeps the first), checks names ([CheckName]) and adds an optional
//     per-integration prefix.
//   - Each action from Neuro goes through a fixed pipeline: look the name up,
//     parse data (a JSON string that may be malformed), validate it against
//     the action's schema (github.com/santhosh-tekuri/jsonschema/v6), call
//     the game's [Action.Validate] under a deadline, send action/result, and
//     only then execute ([Action.Execute], run where the game receives the
//     [*Invocation]). Unknown names,
//     bad data and overruns are answered with success:false and a message
//     that tells her what to do instead. No id is answered twice.
//   - At most one force is outstanding ([Client.Force]); another is refused
//     ([ErrForceBusy]), queued or made to supersede it, and each
//     [ForceHandle] can be awaited. [Client.Window] is the official SDKs'
//     ActionWindow: context with the registration, a force at once, after a
//     delay or when a condition holds (or none), an end after a timer or a
//     condition, and the actions unregistered, before the result, when one
//     succeeds. An action unregistered a moment ago is answered as such.
//
// Messages are queued in order while disconnected and never merged or
// reordered, with one deliberate exception: a force is held while one of
// Neuro's actions awaits its result (she cannot take a force then), and
// that result goes ahead of it. Only actions that arrive after a force was
// sent count as answering it. Registration diffs are not queued while disconnected: startup
// clears the server's set and the full register on connect replaces them.
// Results whose connection was lost are dropped (the server discards stale
// ids anyway), and the action is not executed.
//
// [Schema] builds schemas whose root is an object; [LintSchema] flags the
// 33 keywords the API says are not well supported, uniqueItems, {} versus
// omitted, and missing descriptions. Package neurotest is a fake server for
// tests, with a strict mode and a Randy-like mode, that also reports what
// a conformance tool would about a game's traffic.
//
// # Protocol
//
// The Neuro API (VedalAI/neuro-sdk API/SPECIFICATION.md, with the
// startup acknowledgement, priorities and speech_finished of 2025-2026, and
// the shutdown and reregister_all proposals). Text frames of JSON; the game
// is the WebSocket client; the URL comes from NEURO_SDK_WS_URL, default
// ws://localhost:8000.
//
// # Concurrency
//
// All [Client] methods may be called concurrently; receive events from one
// goroutine. The client owns a connection goroutine (with a reader and a
// writer per connection), one goroutine per action being validated and,
// with Options.Recorder, one writing the recording;
// [Client.Close] stops and joins them all. Execute and the windows'
// conditions run on the goroutine that receives events ([Client.Next],
// [Client.Events], [Client.Poll]), so a game that receives on its main
// thread has them there. No lock is held while game callbacks run. Queues
// are bounded: outgoing messages ([ErrQueueFull]),
// unsent results and registrations (a server that sends actions or
// reregister_all without reading is disconnected), events (actions answered "busy", other events dropped and
// counted), and actions in validation (answered "busy").
//
// # Security
//
// The Neuro server is unauthenticated and may be remote. Messages are
// limited to 4 MiB by default (Options.ReadLimit); action schemas may not load external
// references; Neuro's data is treated as untrusted input and always
// validated before the game sees it. A binary frame, or a text frame that
// is not UTF-8, closes the connection; the handshake follows no redirect;
// her text quoted back to her is clipped (docs/neuro-protocol.md).
package neuro
