package session

import "github.com/gamelink-go/gamelink/rpengine/card"

// The capacity gate (issue #15). The engine refuses a reply.request or
// voice.capture.start with capacity_exceeded when its queued, active and
// capturing requests number queueLimit, and reports that count as
// queueDepth in capacity.update (engine source, measured against the real
// engine; docs/rpengine-protocol.md "Capacity"). The last capacity.update
// is not enough to decide: it does not count the requests the game sent
// since. 25 concurrent Reply calls gave 20 replies and 5 refusals.
//
// So a request is sent only when it is first in line (package rpengine
// keeps the line) and Admit says yes:
//
//   - queueDepth of the last capacity.update plus the requests the game
//     sent that no capacity.update reflects yet stays below queueLimit,
//     acceptingRequests is true, and no capacity_exceeded came since that
//     update (before the first update, upstream's limit of 20 is assumed
//     and the engine taken to accept);
//   - no earlier request for the same character still waits for its
//     reply.accepted, so that requests for one character reach the engine
//     in the order they were made even when one of them must be retried.
//
// A request counts from its admission until a capacity.update that
// follows its reply.accepted (the engine sends one right after it), or
// until it ends or is refused. A capacity_exceeded before reply.accepted,
// which the gate makes rare (an engine that changed its mind, another
// game), goes back to the waiting Reply call (Refused), which goes back
// to the head of the line until the next capacity.update.

// defaultQueueLimit is upstream's queue limit, assumed until the first
// capacity.update (and when one states no positive limit).
const defaultQueueLimit = 20

// Admit counts and holds the request requestID, for the character key,
// when the session can take it: the game then sends it (Send). retry
// says it is the same request again, after a refusal; a new request
// whose requestId is active is ErrDuplicateRequest.
func (s *Session) Admit(requestID string, key card.Key, retry bool) (Admission, error) {
	r := s.replies[requestID]
	switch {
	case r != nil && (!retry || r.key != key):
		return 0, ErrDuplicateRequest
	case r == nil:
		r = &reply{id: requestID, key: key}
	}
	g := &s.gate
	if h := g.held[key]; h != nil && h != r {
		return AdmitHeld, nil
	}
	if s.ended {
		return AdmitEnded, nil
	}
	if !s.room() {
		return AdmitFull, nil
	}
	if s.replies[requestID] == nil {
		s.replies[requestID] = r
	}
	if g.held == nil {
		g.held = map[card.Key]*reply{}
	}
	g.held[key] = r
	g.inflight++
	r.gate = gateSent
	return AdmitOK, nil
}

// InFlight returns the requests the gate counts on top of the last
// capacity.update's queueDepth.
func (s *Session) InFlight() int { return s.gate.inflight }

// room reports whether the engine can take one more request.
func (s *Session) room() bool {
	g, c := &s.gate, s.capacity
	limit, depth, accepting := defaultQueueLimit, 0, true
	if c.Known {
		depth, accepting = c.QueueDepth, c.AcceptingRequests
		if c.QueueLimit > 0 {
			limit = c.QueueLimit
		}
	}
	return accepting && !g.refused && depth+g.inflight < limit
}

// update takes a capacity.update into the count: it reflects every
// request accepted before it.
func (g *gate) update() {
	g.gen++
	g.inflight -= g.accepted
	g.accepted, g.refused = 0, false
}

// gateAccepted records r's reply.accepted: it stays counted until the next
// capacity.update, and its character is free for the next request.
func (s *Session) gateAccepted(r *reply) {
	g := &s.gate
	if r.gate == gateSent {
		r.gate, r.gateGen = gateAccepted, g.gen
		g.accepted++
	}
	if g.held[r.key] == r {
		delete(g.held, r.key)
	}
	s.emit(Output{Kind: OutCapacity})
}

// gateRefused records a capacity_exceeded before r was accepted: r no
// longer counts, the engine is full until its next capacity.update, and
// r keeps its character (it is retried first).
func (s *Session) gateRefused(r *reply) {
	if r.gate == gateSent {
		r.gate = gateNone
		s.gate.inflight--
	}
	s.gate.refused = true
}

// release stops counting r, which ended, and frees its character.
func (s *Session) release(r *reply) {
	g := &s.gate
	changed := r.gate != gateNone || g.held[r.key] == r
	switch {
	case r.gate == gateSent:
		g.inflight--
	case r.gate == gateAccepted && r.gateGen == g.gen:
		g.inflight--
		g.accepted--
	}
	r.gate = gateNone
	if g.held[r.key] == r {
		delete(g.held, r.key)
	}
	if changed {
		s.emit(Output{Kind: OutCapacity})
	}
}
