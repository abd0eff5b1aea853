package rpengine

// GateEntries returns how many requests have entered the capacity gate's
// queue (gate.go) so far, so that tests can make requests in a known
// order from many goroutines.
func GateEntries(s *Server) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tickets
}
