package rpengine

// MessageState is what the engine did with one outbound message, as far
// as the game knows.
type MessageState int

// Message states.
const (
	MessageUnknown   MessageState = iota // never sent in the live session, or forgotten
	MessagePending                       // sent, no ack yet
	MessageAcked                         // acknowledged
	MessageDuplicate                     // acknowledged as a duplicate: not processed again
	MessageRejected                      // answered by invalid_payload instead of an ack
	MessageUnacked                       // no ack within AckTimeout
)

// String returns the state's name.
func (m MessageState) String() string {
	switch m {
	case MessagePending:
		return "pending"
	case MessageAcked:
		return "acked"
	case MessageDuplicate:
		return "duplicate"
	case MessageRejected:
		return "rejected"
	case MessageUnacked:
		return "unacked"
	}
	return "unknown"
}

// Capacity is the engine's last capacity.update.
type Capacity struct {
	QueueDepth        int  `json:"queueDepth"`
	QueueLimit        int  `json:"queueLimit"`
	AcceptingRequests bool `json:"acceptingRequests"`
	// Known is false until the first capacity.update of the session;
	// until then the engine is taken to accept requests up to upstream's
	// queueLimit of 20.
	Known bool `json:"-"`
}
