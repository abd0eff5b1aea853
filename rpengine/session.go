package rpengine

import "time"

// SessionInfo describes one engine session (one hello/welcome) and the
// engine's queue.
type SessionInfo struct {
	ID            string    // the sessionId sent in welcome
	ClientVersion string    // from the engine's hello
	Started       time.Time // when welcome was sent
	// QueueDepth, QueueLimit and Accepting are the engine's queue as its
	// latest capacity.update said, when the SessionInfo was taken:
	// requests queued or running (a capture included), how many it takes,
	// and whether it takes more now. Before the session's first update
	// QueueLimit is 0 and Accepting true, as requests are sent then.
	QueueDepth, QueueLimit int
	Accepting              bool
}
