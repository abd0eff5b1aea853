// Package neurosantest is a fake NeuroSan server for tests, as httptest is
// to HTTP servers. It serves the routes of the real server (list, function,
// connectivity, streaming_chat with agent names containing '/', health),
// scripted agent networks with origin paths, progress messages, MINIMAL and
// MAXIMAL filters (with the request echo the real server adds), chat_context
// continuation with history trimming, and sly_data allow-lists.
//
// It reproduces the traps a client must survive, each behind an option:
// the 0.3 s pause after every line ([Options].LineDelay), two responses on
// one line, lines split across writes, {"error":…} objects appended to a 200
// stream without a newline ([FaultTimeout], [FaultInternal]), 503 before the
// stream, heartbeat frames, chat_context lines over 1 MiB
// ([Agent].ContextPadding), and it records cancelled turns ([TurnRecord])
// so tests can check that an abandoned turn reached the server.
//
// # Concurrency
//
// A Server may be used from many goroutines. Each turn runs its script in
// one goroutine that the handler joins before returning, so Close, which
// waits for handlers, leaves nothing running. Scripts must return when their
// context is cancelled.
package neurosantest
