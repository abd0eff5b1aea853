// Package transport is what a transport of the RPEngine protocol is to
// the game's server: the interfaces between the server (package
// rpengine), its sessions and the transports (internal/ws, the
// WebSocket; internal/mailbox, the file mailbox), and the outbound queue
// every session writes through (Writer).
//
// A transport accepts engine connections, reads each connection's hello
// and attaches a session to it through the Host; it then hands every
// message it reads to the Session, in order, from one reader goroutine,
// and tells the Session when the connection is lost. The session writes
// through the Transport, from a writer goroutine of its own.
package transport

import "github.com/gamelink-go/gamelink/rpengine/internal/session"

// Transport is one engine connection as its session sees it.
type Transport interface {
	// Send writes one encoded message. The session's writer calls it, a
	// message at a time; it bounds its own duration, and on failure ends
	// the connection (the reader then ends the session). It keeps no
	// reference to msg once it returns: the writer reuses the buffers of
	// acks.
	Send(msg []byte) error
	// Close ends the connection with a WebSocket close code and reason
	// (another transport maps them as it can). It is idempotent and does
	// not block.
	Close(code int, reason string)
}

// Session is a live engine session as its transport's reader sees it.
// Its methods may be called from any goroutine.
type Session interface {
	// ID returns the sessionId.
	ID() string
	// Receive hands the session one engine message and returns once the
	// session is done with in.Msg (the reader may reuse it then). It
	// reports false when in.Text is set and the message is not valid
	// UTF-8: the reader closes the connection.
	Receive(in session.Inbound) bool
	// Lost ends the session because its connection is gone (cause says
	// how); End ends it with err itself. Both are idempotent.
	Lost(cause error)
	End(err error)
	// Ended reports whether the session has ended (it takes no more
	// messages); Done is closed once it has and nothing more is written
	// for it.
	Ended() bool
	Done() <-chan struct{}
}

// Hello is what a transport learnt from a connection's valid hello.
type Hello struct {
	MessageID, ClientVersion string
	// MustAck says every engine message is acknowledged whatever the
	// server's options say (file mode: acks are how the engine deletes
	// its files).
	MustAck bool
	// WelcomeExtra are more welcome fields (file mode), or nil.
	WelcomeExtra map[string]any
	// WholeSegments says speech arrives as whole segments (file mode).
	WholeSegments bool
}

// Host is the game's server as a transport sees it. Its methods may be
// called from any goroutine.
type Host interface {
	// Register counts a new connection that has not said hello yet; it
	// fails when the server is closed or too many handshakes wait.
	// Unregister forgets it; inHandshake says it was still counted as a
	// handshake.
	Register(t Transport) error
	Unregister(t Transport, inHandshake bool)
	// Attach starts a session on t after its hello: the ack of the hello
	// and the welcome are written, and only then is the session live,
	// superseding the older one.
	Attach(t Transport, h Hello) (Session, error)
	// Record gives the server's Recorder an engine message that no
	// session received (a hello, a message outside the live session).
	Record(in bool, msg []byte)
}

// WebSocket close codes the server uses.
const (
	ClosePolicy      = 1008 // bad hello, second hello, wrong protocol
	CloseUnsupported = 1003 // binary frame
	CloseInvalidData = 1007 // invalid UTF-8 in a text frame (RFC 6455 section 8.1)
	CloseSuperseded  = 3000 // a newer engine connection took over
	CloseGoingAway   = 1001 // server shutting down
)
