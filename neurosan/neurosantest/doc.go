// Package neurosantest is a fake NeuroSan server for tests, in the shape of
// net/http/httptest:
//
//	srv := neurosantest.NewServer(nil) // started; NewUnstartedServer + Start to start later
//	defer srv.Close()
//	c, err := neurosan.New(srv.URL, &neurosan.Options{HTTPClient: srv.Client()})
//
// It serves the routes of the real server (list, function,
// connectivity, streaming_chat with agent names containing '/', the direct
// tool call, the health probes), scripted agent networks with origin
// paths, progress messages, MINIMAL and MAXIMAL filters (with the request
// echo the real server adds), chat_context continuation with history
// trimming, and sly_data allow-lists.
//
// # Fidelity
//
// Its default output is the real server's, byte for byte, as read from the
// server's source (a Python Tornado service that cannot run in this
// project's CI):
//
//   - Every stream line is json.dumps(response) + "\n": ", " and ": "
//     separators, \uXXXX escapes for everything outside printable ASCII,
//     floats as Python's repr writes them, and NaN, Infinity and
//     -Infinity where a value is not finite. Members come in the order the
//     server builds them; the final AGENT_FRAMEWORK answer has no origin;
//     "text" is always present.
//   - Error and GET bodies are Tornado's json_encode of a dictionary
//     ({"error": "…"}, with "</" written as "<\/"), with the content type
//     "application/json; charset=UTF-8". The 403 of a refusing authorizer
//     and the 404 of an unknown agent have empty bodies; a path no route
//     matches gets Tornado's HTML error page.
//   - Lines are flushed one by one with no pause between them, so several
//     may arrive in one read; servers before May 2026 paused 0.3 s after
//     each ([Options].LineDelay, [LegacyLineDelay]).
//   - A failure after the 200 headers appends {"error": "Request timeout"}
//     or {"error": "Internal server error"} without a newline, possibly
//     after a complete answer ([Reply].After).
//   - The server learns that a client left only when a write to the stream
//     fails. With MINIMAL and no heartbeat (its defaults) that is the final
//     answer: until then the script runs on and the turn holds its
//     concurrency slot ([TurnRecord].Cancelled, [Options].ConcurrencyLimit).
//
// It also reproduces the traps a client must survive, each behind an
// option: two responses on one line, lines split across writes, 503 before
// the stream, heartbeat frames, chat_context lines over 1 MiB
// ([Agent].ContextPadding), a connection cut ([FaultCut]), and the empty
// chat_context of "Event acknowledged" ([Reply].EmptyContext).
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
