// Package neurosantest is a fake NeuroSan server for a game's tests, in the
// shape of net/http/httptest: a test serves scripted agent networks, points
// the game's neurosan client at them, and checks the answers and what each
// turn carried.
//
//	srv := neurosantest.NewServer(&neurosantest.Options{Agents: []neurosantest.Agent{{
//		Name: "shop/keeper",
//		Script: func(ctx context.Context, t *neurosantest.Turn) neurosantest.Reply {
//			return neurosantest.Reply{Text: "Ten gold for " + t.Text + "."}
//		},
//	}}}) // started; NewUnstartedServer + Start to start later
//	defer srv.Close()
//	c, err := neurosan.New(srv.URL, &neurosan.Options{HTTPClient: srv.Client()})
//	// send turns; then srv.Turns() says what each carried
//
// It serves the routes of the real server (list, function, connectivity,
// streaming_chat with agent names containing '/', the direct tool call,
// the health probes), scripted agent networks with origin paths, progress
// messages, MINIMAL and MAXIMAL filters, chat_context continuation with
// history trimming, and sly_data allow-lists. [DemoAgents] are the agents
// of neurosan-chat --fake.
//
// # Protocol
//
// Its default output is the real server's, byte for byte, as read from the
// server's source (a Python Tornado service that cannot run in this
// project's CI): Python's json.dumps lines, Tornado's error bodies and
// pages, lines flushed with no pause ([Options].LineDelay for older
// servers), {"error": …} appended after the 200 headers on a failure
// ([Reply].Fault, [Reply].After), and a client that left noticed only at
// the next write ([TurnRecord].Cancelled, [Options].ConcurrencyLimit). It
// also reproduces, each behind an option, the traps a client must survive:
// two responses on one line, lines split across writes, 503 before the
// stream, heartbeat frames, chat_context lines over 1 MiB
// ([Agent].ContextPadding), a connection cut ([FaultCut]), and the empty
// chat_context of "Event acknowledged" ([Reply].EmptyContext).
// docs/neurosan.md lists what is copied, and docs/neurosan-protocol.md
// says where the facts come from.
//
// # Concurrency
//
// A Server may be used from many goroutines. Each turn runs its script in
// one goroutine that the handler joins before returning; Close cancels
// every script and waits for the handlers, so it leaves nothing running.
// Scripts must return when their context is cancelled. [Server.Client]
// connects over in-memory pipes, so a server created inside a
// testing/synctest bubble runs on the bubble's fake clock.
//
// # Security
//
// The server opens no port unless [Options].Addr asks for one, and then
// binds loopback addresses only.
package neurosantest
