package rpengine

// transport carries whole encoded envelopes between one session and one
// engine connection. The session logic (session.go) knows nothing else of
// the transport: the WebSocket connection (ws.go) implements it, and the
// file mailbox (mailbox.go) is the second one (docs/rpengine-protocol.md).
//
// A transport delivers inbound messages by calling session.receive from a
// single reader goroutine of its own, in arrival order, and calls
// session.end when the connection is gone. Its first inbound message goes
// to Server.handshake, which validates the hello and attaches a session.
type transport interface {
	// send writes one encoded message. The session's writer goroutine
	// calls it, one message at a time; it bounds its own duration, and
	// on failure ends the connection (the reader then ends the session).
	// It keeps no reference to msg once it returns: the writer reuses
	// the buffers of acks.
	send(msg []byte) error
	// close ends the connection with a WebSocket close code and reason
	// (another transport maps them as it can). It is idempotent and does
	// not block.
	close(code int, reason string)
	// mustAck reports whether every engine message must be acknowledged
	// whatever ServerOptions.DisableAcks says (file mode: acks are how the
	// engine deletes its files).
	mustAck() bool
	// welcomeExtra returns extra fields for welcome (file mode:
	// peerInstanceId, nextAudioSlot), or nil.
	welcomeExtra() map[string]any
}

// replyHandler is implemented by a transport that has reply messages of
// its own, such as file mode's reply.audio.segment (a whole sentence in a
// WAV slot). The session offers it every reply message type it does not
// know; it returns true when it handled the message, typically by
// decoding the audio and calling Reply.pushSegment. Such a transport
// delivers speech as whole segments, so reply.audio.completed is checked
// against those (totals.go).
type replyHandler interface {
	handleReply(r *Reply, typ string, data []byte) bool
}

// WebSocket close codes the server uses.
const (
	closePolicy      = 1008 // bad hello, second hello, wrong protocol
	closeUnsupported = 1003 // binary frame
	closeInvalidData = 1007 // invalid UTF-8 in a text frame (RFC 6455 section 8.1)
	closeSuperseded  = 3000 // a newer engine connection took over
	closeGoingAway   = 1001 // server shutting down
)
