package rpengine

import (
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/session"
)

// GateEntries returns how many requests have entered the capacity gate's
// line (send.go) so far, so that tests can make requests in a known
// order from many goroutines.
func GateEntries(s *Server) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tickets
}

// FailMailboxInbox makes listing the server's mailbox inbox fail with err
// (nil: it works again), for tests of a lasting condition that root, as
// CI runs, cannot bring about with permissions. It waits until the
// mailbox is being served.
func FailMailboxInbox(s *Server, err error) {
	for {
		s.mu.Lock()
		m := s.mbox
		s.mu.Unlock()
		if m != nil {
			m.FailList(err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// OnMailboxSlot makes the mailbox setup call f after it writes each audio
// slot, on the goroutine setting up. Call it before Start.
func OnMailboxSlot(s *Server, f func(slot int)) { s.slotHook = f }

// OnSessionEnded makes the server call f when a session has ended and is
// not yet detached (still the live one), on the goroutine ending it.
// Call it before Start or Serve.
func OnSessionEnded(s *Server, f func()) { s.endHook = f }

// The state of an outbound message, for tests of acks and duplicates.
type MessageState = session.State

// Message states.
const (
	MessageUnknown   = session.Unknown
	MessagePending   = session.Pending
	MessageAcked     = session.Acked
	MessageDuplicate = session.Duplicate
	MessageRejected  = session.Rejected
	MessageUnacked   = session.Unacked
)

// MessageStatus reports what the engine did with an outbound message of
// the live session.
func (s *Server) MessageStatus(id string) MessageState { return s.messageStatus(id) }

// MessageID returns the messageId of r's latest attempt.
func (r *Reply) MessageID() string { return r.messageID() }

// Capacity returns the live session's last capacity.update (Known false
// before the first), and false without a session; games read the same
// through Server.Session.
func (s *Server) Capacity() (session.Capacity, bool) {
	c := s.current()
	if c == nil {
		return session.Capacity{}, false
	}
	return c.capacity(), true
}

// MailboxDir returns the mailbox folder the server serves (absolute).
func (s *Server) MailboxDir() string { return s.opts.mailbox.Dir }
