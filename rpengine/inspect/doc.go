// Package inspect is a live page showing what a game's rpengine.Server
// and the RPEngine engine say to each other, served by the game itself in
// the way net/http/pprof and expvar expose a Go program's internals: an
// http.Handler the game mounts on a loopback debug listener of its own,
// off unless it does. See docs/inspector.md for what the page shows.
//
//	in := inspect.New(nil)
//	server, err := rpengine.NewServer(&rpengine.ServerOptions{Recorder: in, Logger: in.Logger(nil), OnSession: in.OnSession})
//	go http.Serve(debugListener, in) // log.Print(in.URL(debugListener.Addr().String()))
//
// The page shows the connection (transport, engine state, client version,
// session id, the engine's queue over the last minutes), each reply as a
// timeline row (sent, accepted, first text, first audio, text and audio
// completed, completed or its error, with the milliseconds between them
// and the engine's elapsedMs; the card transfer and the prompt fields),
// its text as it streams, each audio segment as a waveform that plays
// (served as WAV) with a speaker's heard position ([Inspector.AddSpeaker]),
// the Logger's warnings and anomalies beside their reply, the protocol
// log both ways (filterable by type and request, each message's JSON on
// click with base64 audio elided) and the characters synced.
//
// Everything is derived from the Recorder's lines and the Logger's
// records. The moments only the game knows (when Reply was called, how
// long a request waited for capacity and why, an end no message says)
// and, in file mode, each segment's samples are the server's own lines,
// with "dir":"game" (docs/inspector.md, "The seam"): the inspector never
// reads the mailbox folder.
//
// # Security
//
// The page shows the player's words and voice. Every request must arrive
// on a loopback address, with that address (or localhost, with its port)
// as Host, which defeats DNS rebinding, and with the page's unguessable
// token in the query ([Inspector.URL]); anything else gets 403. The page
// loads nothing from elsewhere (its HTML, CSS and JavaScript are embedded;
// a Content-Security-Policy allows only its own origin) and sends no
// Referer.
//
// # Bounds
//
// At most [Options.MaxReplies] replies and [Options.MaxReplyBytes] of
// their text and audio are kept, and [Options.MaxLogBytes] of the
// protocol log; past them the oldest go. At most [Options.MaxWatchers]
// pages watch at once; a page that falls 8 MiB of events behind is
// dropped (its browser reconnects and starts from a fresh snapshot).
//
// # Concurrency
//
// All methods may be called concurrently. The Inspector starts no
// goroutine: Write runs on the Recorder's goroutine (the server's own, off
// the connection's hot path), and each page is served on its request's
// goroutine, which also asks the speakers where playback is, only while
// the page is open. With no page open, a line costs its parse and what it
// keeps; nothing is formatted for a page (see the benchmark in
// docs/inspector.md).
package inspect
