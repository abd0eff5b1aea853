package rpengine

// messageState is what the engine did with one outbound message, as far
// as the game knows (tests read it through export_test.go).
type messageState int

// Message states.
const (
	messageUnknown   messageState = iota // never sent in the live session, or forgotten
	messagePending                       // sent, no ack yet
	messageAcked                         // acknowledged
	messageDuplicate                     // acknowledged as a duplicate: not processed again
	messageRejected                      // answered by invalid_payload instead of an ack
	messageUnacked                       // no ack within AckTimeout
)

// String returns the state's name.
func (m messageState) String() string {
	switch m {
	case messagePending:
		return "pending"
	case messageAcked:
		return "acked"
	case messageDuplicate:
		return "duplicate"
	case messageRejected:
		return "rejected"
	case messageUnacked:
		return "unacked"
	}
	return "unknown"
}

// capacity is the engine's last capacity.update.
type capacity struct {
	QueueDepth        int  `json:"queueDepth"`
	QueueLimit        int  `json:"queueLimit"`
	AcceptingRequests bool `json:"acceptingRequests"`
	// Known is false until the first capacity.update of the session;
	// until then the engine is taken to accept requests up to upstream's
	// queueLimit of 20.
	Known bool `json:"-"`
}
