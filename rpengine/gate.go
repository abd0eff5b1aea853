package rpengine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// The capacity gate (issue #15). The engine refuses a reply.request or
// voice.capture.start with capacity_exceeded when its queued, active and
// capturing requests number queueLimit, and reports that count as
// queueDepth in capacity.update (engine source, measured against the real
// engine; docs/rpengine-protocol.md "Capacity"). The last capacity.update
// is not enough to decide: it does not count the requests the game sent
// since. 25 concurrent Reply calls gave 20 replies and 5 refusals.
//
// So every request waits in one FIFO queue of tickets and is sent only
// when it is first in line and
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
// A request counts from its send until a capacity.update that follows its
// reply.accepted (the engine sends one right after it), or until it ends
// or is refused. Reply waits for reply.accepted (or the end of the
// request); a capacity_exceeded before it, which the gate makes rare (an
// engine that changed its mind, another game), puts the request back at
// the head of the queue until the next capacity.update, bounded by the
// Reply call's ctx, or fails it with ErrBusy under FailFast.
//
// Rejected alternative: a background retry after Reply returned. Nothing
// would bound it but the reply's own timeouts, FailFast could not answer
// ErrBusy, and a later request for the same character could overtake it.

// defaultQueueLimit is upstream's queue limit, assumed until the first
// capacity.update (and when one states no positive limit).
const defaultQueueLimit = 20

// gateState is where a request stands in the gate's count. Guarded by the
// session's mu.
type gateState int

const (
	gateNone     gateState = iota // not counted
	gateSent                      // sent, not yet accepted
	gateAccepted                  // accepted; counted until the next capacity.update
)

// sessionGate is the capacity gate's view of one session. Guarded by the
// session's mu.
type sessionGate struct {
	gen      uint64              // capacity.updates received
	inflight int                 // requests counted on top of the last queueDepth
	accepted int                 // of inflight: accepted since the last capacity.update
	refused  bool                // capacity_exceeded since the last capacity.update
	held     map[card.Key]*Reply // per character, the request waiting for reply.accepted
}

// ticket is one request's place in the Server's queue.
type ticket struct {
	r   *Reply
	key card.Key
}

// admission is what the gate says to the ticket first in line.
type admission int

const (
	admitOK    admission = iota // counted and held: send it
	admitFull                   // the engine has no room (or just refused)
	admitHeld                   // an earlier request for the character is not accepted yet
	admitEnded                  // the session ended (it is being taken down)
)

// roomLocked reports whether the engine can take one more request.
func (s *session) roomLocked() bool {
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

// admit counts and holds t's request when the session can take it.
func (s *session) admit(t *ticket) admission {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &s.gate
	if h := g.held[t.key]; h != nil && h != t.r {
		return admitHeld
	}
	if s.ended != nil {
		return admitEnded
	}
	if !s.roomLocked() {
		return admitFull
	}
	if g.held == nil {
		g.held = map[card.Key]*Reply{}
	}
	g.held[t.key] = t.r
	g.inflight++
	t.r.gate = gateSent
	return admitOK
}

// gateCapacityLocked takes a capacity.update into the count: it reflects
// every request accepted before it.
func (s *session) gateCapacityLocked() {
	g := &s.gate
	g.gen++
	g.inflight -= g.accepted
	g.accepted, g.refused = 0, false
}

// gateAccepted records r's reply.accepted: it stays counted until the next
// capacity.update, and its character is free for the next request.
func (s *session) gateAccepted(r *Reply) {
	s.mu.Lock()
	g := &s.gate
	if r.gate == gateSent {
		r.gate, r.gateGen = gateAccepted, g.gen
		g.accepted++
	}
	if g.held[r.key] == r {
		delete(g.held, r.key)
	}
	s.mu.Unlock()
	s.srv.notify()
}

// gateRefused records a capacity_exceeded before r was accepted: r no
// longer counts, the engine is full until its next capacity.update, and
// r keeps its character (it is retried first).
func (s *session) gateRefused(r *Reply) {
	s.mu.Lock()
	if r.gate == gateSent {
		r.gate = gateNone
		s.gate.inflight--
	}
	s.gate.refused = true
	s.mu.Unlock()
}

// gateRelease stops counting r, which ended, and frees its character.
func (s *session) gateRelease(r *Reply) {
	s.mu.Lock()
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
	s.mu.Unlock()
	if changed {
		s.srv.notify()
	}
}

// admit waits, bounded by ctx, until t is first in line and the live
// session takes it (session.admit), and returns that session. A ticket
// put back after a refusal goes first. With FailFast it fails at once
// with ErrNotConnected or ErrBusy instead of waiting for an engine or for
// room, but still waits its turn and for its character. It returns early,
// with a nil session and no error, when t's reply ended meanwhile.
func (s *Server) admit(ctx context.Context, t *ticket, first bool) (*session, error) {
	s.mu.Lock()
	if first {
		s.queue = slices.Insert(s.queue, 0, t)
	} else {
		s.queue = append(s.queue, t)
	}
	s.tickets++
	s.mu.Unlock()
	defer s.leave(t)
	var done <-chan struct{}
	if t.r.sess != nil {
		done = t.r.done
	}
	for {
		select {
		case <-done:
			return nil, nil
		default:
		}
		s.mu.Lock()
		live, closed, ch := s.live, s.closed, s.changed
		head := s.queue[0] == t
		s.mu.Unlock()
		var what string
		switch {
		case closed:
			return nil, ErrServerClosed
		case t.r.sess != nil && live != t.r.sess:
			// A retry belongs to its session, which is ending: its end
			// fails the reply (done above).
			what = "the request's engine connection to end"
		case live == nil:
			if s.opts.FailFast {
				return nil, ErrNotConnected
			}
			what = "an engine connection"
		case !head:
			what = "earlier requests to be sent"
		default:
			switch live.admit(t) {
			case admitOK:
				return live, nil
			case admitHeld:
				what = "the engine to accept an earlier request for the same character"
			case admitEnded:
				// Its connection is lost and it is being taken down: as
				// when no session is live (with FailFast it was ErrBusy,
				// as if the engine had said it was full).
				if s.opts.FailFast {
					return nil, ErrNotConnected
				}
				what = "an engine connection"
			default:
				if s.opts.FailFast {
					return nil, ErrBusy
				}
				what = "the engine to accept requests"
			}
		}
		select {
		case <-ch:
		case <-done:
			return nil, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("rpengine: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// leave takes t out of the queue; the next ticket may be first now.
func (s *Server) leave(t *ticket) {
	s.mu.Lock()
	if i := slices.Index(s.queue, t); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	s.notifyLocked()
	s.mu.Unlock()
}

// errRefused is the outcome of an attempt refused with capacity_exceeded,
// errResync of one refused with card_resync_required.
var (
	errRefused = errors.New("refused for capacity")
	errResync  = errors.New("card resynchronisation required")
)

// await waits, bounded by ctx, for the engine's decision on the request's
// latest attempt: nil once it is accepted or the request ended, and
// errRefused (with the engine's error) after a capacity_exceeded.
func (r *Reply) await(ctx context.Context) (*RequestError, error) {
	select {
	case <-r.decided:
		return nil, nil
	case <-r.done:
		return nil, nil
	case rerr := <-r.refused:
		return rerr, errRefused
	case rerr := <-r.resync:
		return rerr, errResync
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refuse takes a capacity_exceeded for r: when the Reply call still waits
// for the engine's decision and the engine has not accepted r, the
// refusal goes back to that call to retry (true). Reader goroutine.
func (r *Reply) refuse(rerr *RequestError) bool {
	r.mu.Lock()
	retry := r.starting && !r.accepted && !r.ended
	r.mu.Unlock()
	if !retry {
		return false
	}
	r.sess.gateRefused(r)
	select {
	case r.refused <- rerr:
	default: // one refusal per attempt is enough
	}
	return true
}

// retry takes a card_resync_required for r: when the Reply call still
// waits for the engine's decision, it goes back to that call, which plans
// a snapshot and sends it (true). Reader goroutine.
func (r *Reply) retry(rerr *RequestError) bool {
	r.mu.Lock()
	retry := r.starting && !r.accepted && !r.ended
	r.mu.Unlock()
	if !retry {
		return false
	}
	select {
	case r.resync <- rerr:
	default: // one per attempt is enough
	}
	return true
}

// decide closes r.decided once, at reply.accepted. Reader goroutine.
func (r *Reply) decide() {
	r.mu.Lock()
	first := !r.accepted
	r.accepted = true
	r.mu.Unlock()
	if first {
		close(r.decided)
		r.sess.gateAccepted(r)
	}
}
