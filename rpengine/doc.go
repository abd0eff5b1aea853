// Package rpengine lets a game talk to its characters through RPEngine, a
// browser page that runs the model, speech synthesis and recognition on
// the player's machine. The game serves; the page connects to it (over a
// loopback WebSocket, or a mailbox folder with ServerOptions.Mailbox).
// A game starts a Server, sends each character's Character Card V2 with
// its requests, and consumes each Reply's events: the text as it streams
// and its speech, sentence by sentence (44.1 kHz), to play with package
// audio.
//
//	server, err := rpengine.NewServer(nil) // 127.0.0.1:38471
//	err = server.Start()                   // server.URL() is what the player opens
//	c, err := card.New(card.Data{Name: "Ari", Description: "A scout."})
//	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: c,
//		Text: "Hello!", Voice: "F1"}) // or SpeechFloat: recording.Float32()
//	for ev := range reply.Events() {
//		switch ev.Kind {
//		case rpengine.EventText:     // ev.Text: the whole subtitle so far
//		case rpengine.EventSegment:  // speaker.Enqueue(reply.RequestID(), ev.Segment)
//		case rpengine.EventAudioEnd: // speaker.End(reply.RequestID())
//		case rpengine.EventEnd:      // ev.Err: nil, or why it failed
//		}
//	}
//
// Tests serve the fake engine of package enginetest in memory, or dial it
// into a server started on "127.0.0.1:0".
//
// # Protocol
//
// RPEngine protocol v3 (gemtavern.rp_engine): this project's notes are
// docs/rpengine-protocol.md, and how this package implements them is
// docs/rpengine-design.md. Cards go as a snapshot, a patch or a
// reference, whichever is smallest; requests wait for room in the
// engine's queue and are sent in order; a request the engine would refuse
// is a *FieldError before anything is sent.
//
// # Concurrency
//
// All Server and Reply methods may be called concurrently. Constructors
// start no goroutine; Start and Serve do, and Shutdown or Close returns
// once they all ended. Requests wait, bounded by their context, for an
// engine with room (or fail at once with ServerOptions.FailFast), are not
// sent once their context expired, and every request ends: ErrConnectionLost, ErrNoAnswer (AckTimeout,
// IdleTimeout), ErrSlowConsumer (see Reply), or the engine's answer.
// Callbacks (Logger, OnSession, OnStop, the Recorder) are called with no
// lock of the package held, with values that stay theirs.
//
// # Security
//
// The server binds 127.0.0.1 only, accepts only its socket path, a
// loopback Host and the RPEngine page's exact origins (ExtraOrigins;
// InsecureSkipOriginCheck is the escape hatch), bounds every connection,
// message (8 MiB), queue and log line, and escapes what the engine sends
// before logging it. A mailbox folder must be private to the user. What
// it cannot stop: a native process on the player's machine, which can
// take over the session with its own hello.
package rpengine
