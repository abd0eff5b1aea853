// Package rpengine is the game side of RPEngine protocol v3
// (gemtavern.rp_engine; this project's notes on it are
// docs/rpengine-protocol.md): a loopback-only WebSocket server that the
// RPEngine browser page connects to, and the API a game uses to send
// Character Card V2 characters and events and to consume streamed replies
// (text and 44.1 kHz speech, sentence by sentence).
//
// The integration, with the speech played by package audio:
//
//	server, err := rpengine.NewServer(nil) // 127.0.0.1:38471
//	err = server.Start()                   // bound when it returns: server.URL() is what the player opens
//	c, err := card.New(card.Data{Name: "Ari", Description: "A scout."})
//	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: c,
//		Text: "Hello!", Voice: "F1"}) // or Speech: recording.Samples
//	for ev := range reply.Events() {
//		switch ev.Kind {
//		case rpengine.EventText:     // ev.Text: the whole subtitle so far
//		case rpengine.EventSegment:  // speaker.Enqueue(reply.RequestID(), ev.Segment)
//		case rpengine.EventAudioEnd: // speaker.End(reply.RequestID())
//		case rpengine.EventEnd:      // ev.Err: nil, or why it failed
//		}
//	}
//
// Tests dial the fake engine of package enginetest into a server started
// on "127.0.0.1:0", or serve it in memory (Serve takes any listener whose
// address is a loopback one).
//
// # Protocol
//
// The engine connects to ws://127.0.0.1:PORT/rp-engine/socket and sends
// hello; the server answers welcome with a new sessionId. Every outbound
// message carries protocol, protocolVersion 3, a unique messageId, the
// sessionId and an ISO 8601 timestamp, and is tracked until the engine
// acks it. Inbound messages are acknowledged
// (unless [ServerOptions.DisableAcks]) and deduplicated by messageId over
// a window of 2000 per session. A request.error invalid_payload carries
// no ids: the server attributes it to the oldest message the engine has
// not acked, which over one ordered connection is the one refused.
//
// Cards go through the session's card.Planner: a snapshot first, then
// patches or references; card_resync_required is retried with the
// planner's snapshot, same requestId and eventId, new messageId, at most
// twice, so it never loops. Reply streams go through stream.Assembler.
//
// The session logic is transport-independent: the WebSocket connection is
// one transport; the file mailbox plugs in beside it.
//
// # capacity
//
// The engine queues at most queueLimit (20) requests, counting the active
// reply and a capture, and refuses more with capacity_exceeded. Its last
// capacity.update does not count the requests still on their way, so the
// server counts them itself: requests wait in one queue, in the order
// Reply and Capture were called, and are sent only while the last
// queueDepth plus the requests no capacity.update reflects yet stays
// below queueLimit (20 before the first update), and only once the engine
// accepted the previous request for the same character, so that each
// character's requests reach the engine in order. Reply and Capture
// return at reply.accepted; a capacity_exceeded before it is retried after
// the engine's next capacity.update (ErrBusy with FailFast). SyncCharacter
// is not queued: the engine takes character.sync whatever its queue holds.
//
// # Outbound validation
//
// A request is checked before anything is sent, and refused with a
// *FieldError only for what the engine itself refuses (as invalid_payload,
// or as an error once the request is queued); no rule is stricter than
// the engine's (issue #15). In the requests' terms: IntegrationID,
// CharacterID and a valid Character Card V2 are required; the event needs
// non-blank Text or Speech (at most 30 s, SpeechLanguage en ar es ja ko
// vi uk zh); Language is one the speech model has (else
// unsupported_language), Voice F1-F5 or M1-M5 (else unsupported_voice),
// AudioProfile narrowband_voice or cinematic_radio with a Voice; up to 8
// Rules, ids matching ^[a-z][a-z0-9_.-]{0,63}$ without repeats, a pattern
// of 1 to 1024 bytes with at most 16 groups, Flags distinct letters of
// "ims", an existing Group, Occurrence first, last or all, Remove match,
// capture or none, and RemoveFrom of distinct text and audio, empty with
// Remove none; a Prompt with non-empty strings, a finite Priority, a
// DirectiveVersion of at least 1 and a non-blank Version when set; a
// message is at most 8 MiB. The wire names of each are in
// docs/rpengine-protocol.md, "Game to engine".
//
// What the engine accepts but is probably a mistake is sent and logged as
// a warning: whitespace-only Prompt strings and a blank PlayerName (the
// engine does not look at the player). A pattern Go's RE2 parser cannot
// read is left to the engine, which compiles it as Rust regex.
//
// # File mailbox
//
// A game that cannot open a socket sets [ServerOptions.Mailbox]; every
// other line stays the same and Start sets up and serves the folder
// instead of listening, returning the setup's errors. At start (and whenever the folder is set up again) it
// refuses a folder or sub-folder that another account owns or can write
// into ([ErrMailboxNotPrivate], unless
// MailboxOptions.InsecureSkipOwnerCheck), creating its own private (0700
// folders, 0600 files; on Windows the inherited ACL); it takes the folder's lock file
// ([MailboxLockName]: a second process refuses with [ErrMailboxLocked];
// a crashed holder's lock goes stale after MailboxOptions.LockStale, or at
// once when its process is gone from this machine, and is taken over),
// removes what a crash of ours left half-done, and writes
// every audio slot (a one-sample silent PCM16 WAV) and then manifest.json.
// Outbound envelopes go to integration-to-engine as
// <13-digit ms>-<messageId>.json with strictly increasing stems, written
// under a temporary name, renamed, then marked by an empty .ready; the
// engine deletes them. Inbound files in engine-to-integration are read
// only once marked, in stem order, each once, and every one except acks
// is acknowledged (in file mode acks are how the engine deletes its
// files). Unparsable, foreign-protocol or over-8-MiB files are skipped
// with a log line (a marked file that is not yet JSON gets one second's
// grace, for a racing writer, while later files go on: a bad file never
// delays a good one). Each engine hello starts a session whose
// welcome adds peerInstanceId (new per Server) and nextAudioSlot; what the
// game wrote for the ended session (or a previous process) and the engine
// never read is removed first, so a new session never processes it.
// reply.audio.segment is read from its slot (the path must name that slot
// of the audio folder; the file must be a regular file inside the folder,
// checked through os.Root, with no other hard link; format, rate,
// channels and byteLength must match; it is streamed into samples, never
// read whole), handed to the reply as a whole segment, and answered with
// reply.audio.segment.consumed (also for a reply that already ended, so
// the slot goes back to silence); a refused segment is an EventAnomaly.
// reply.audio.completed carries the WebSocket totals in file mode too
// (chunkCount as if chunks had been sent); they are checked against the
// whole segments received, counted the same way.
// A failed write (full disk) fails the request that made it with a
// *fs.PathError naming the file and leaves nothing partial; a failed ack is
// retried on the next polls. A folder deleted underneath, or an inbox
// swapped for another folder, ends the session and is set up again. A
// lasting condition (an inbox that cannot be read, an outbox that cannot
// be written) is logged when it starts and when it ends, with a count.
// On Windows, a file another process holds open is retried briefly when
// it is in the way of a rename or removal. Nothing outside the folder is written, removed or
// followed. Polling runs at 50 ms while messages flow and 250 ms when idle
// (file-system notifications could shorten it later).
//
// # Concurrency
//
// All Server and Reply methods may be called concurrently. Constructors
// start no goroutine; Start and Serve run one goroutine per connection
// (net/http's) and the mailbox's poller, and Shutdown/Close returns only
// after all of them ended. Each connection has one reader, which never
// waits for the game (see [Reply] for the slow-consumer policy), for a
// write (a writer goroutine per session sends what it posts, with a
// bounded queue: see Security for its overflow policy), for a card plan
// (planned by the request's own goroutine) or for the Recorder (written
// by a goroutine of its own). Requests wait (bounded by their context)
// for a connected engine with room for them (see Capacity), or fail at once
// with [ServerOptions.FailFast]. Every request ends: a lost or superseded
// connection ends it with [ErrConnectionLost], a message with neither ack
// nor answer with [ErrNoAnswer] after [ServerOptions.AckTimeout], a reply
// that goes silent after [ServerOptions.IdleTimeout].
//
// # Security
//
// The server binds 127.0.0.1 only (any other address is a *ConfigError).
// It accepts only the path /rp-engine/socket (else 404), a Host of
// 127.0.0.1:PORT or localhost:PORT (DNS-rebinding defence, else 403), and
// an Origin compared exactly with the allow-list (https://rpengine.gemtavern.com,
// https://rp-engine.gemtavern.com, http://127.0.0.1:5173 only in
// DevelopmentMode, plus ExtraOrigins); a missing, null or look-alike Origin
// gets 403, and a request that declares a body (Content-Length or
// Transfer-Encoding) 400, before the upgrade; a refused request's
// connection is closed without reading a body, and request headers are
// limited to 64 KiB. One deadline, HandshakeTimeout after the connection
// is accepted, bounds everything up to the hello: the request, the upgrade
// and the hello itself (close 1008 for a bad one). At most 64 connections
// are open at once (a new one waits for a slot), and at most MaxHandshakes
// upgraded sockets may be waiting for hello (more get 503); they cannot
// disturb the live session. Messages are limited to 8 MiB (close 1009),
// text frames only (close 1003) of valid UTF-8 (close 1007). A write the
// engine does not read within WriteTimeout closes the connection, and so
// does an engine that reads none of the 1024 messages the reader posted
// (acks, cancellations) for as long (close 1008). The
// duplicate window keeps a 128-bit digest per messageId, whatever its
// length. Every value from the engine or a refused client is bounded and
// escaped in log lines and error texts, and a line that repeats is logged
// 50 times, then counted until it stops. What this cannot stop: a native
// process on the player's machine, which can send any Origin and Host and
// take over the session with its own hello.
package rpengine
