package rpengine

import "time"

// GateEntries returns how many requests have entered the capacity gate's
// queue (gate.go) so far, so that tests can make requests in a known
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
			m.listFault.Store(&err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}
