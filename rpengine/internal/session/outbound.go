package session

import "time"

// owner is what an outbound message belongs to: a reply (its requestId)
// or a sync (its call's id); the zero owner is none.
type owner struct {
	request string
	sync    uint64
}

// outMsg is an outbound message awaiting its ack.
type outMsg struct {
	id, typ  string
	owner    owner
	deadline time.Time // of its ack; zero without AckTimeout
}

// outbound tracks the messages sent in one session: pending ones until
// their ack, and the final state of the last window ones. AckTimeout is
// the same for every message, so the oldest pending message has the
// first deadline.
type outbound struct {
	window  int
	pend    map[string]*outMsg // by messageId
	order   []*outMsg          // pending in send order (lazily trimmed)
	settled map[string]State
	ring    []string // settled ids, oldest first, at most window
}

func (o *outbound) init(window int) {
	o.window, o.pend, o.settled = window, map[string]*outMsg{}, map[string]State{}
}

// add tracks m, sent now. Past window pending messages (acks never come
// and AckTimeout is off), the oldest is given up as unacked.
func (o *outbound) add(now time.Time, ackTimeout time.Duration, m *outMsg) {
	if ackTimeout > 0 {
		m.deadline = now.Add(ackTimeout)
	}
	o.pend[m.id] = m
	o.order = append(o.order, m)
	o.trim()
	for len(o.order) > o.window {
		o.settle(o.order[0], Unacked)
		o.trim()
	}
}

// trim drops settled messages from the front of order.
func (o *outbound) trim() {
	for len(o.order) > 0 && o.pend[o.order[0].id] != o.order[0] {
		o.order[0] = nil
		o.order = o.order[1:]
	}
}

// settle records the final state of a pending message.
func (o *outbound) settle(m *outMsg, st State) {
	if o.pend[m.id] != m {
		return
	}
	delete(o.pend, m.id)
	o.settled[m.id] = st
	o.ring = append(o.ring, m.id)
	if len(o.ring) > o.window {
		delete(o.settled, o.ring[0])
		o.ring = o.ring[1:]
	}
}

// acked settles the message an ack names.
func (o *outbound) acked(id string, dup bool) {
	if m := o.pend[id]; m != nil {
		st := Acked
		if dup {
			st = Duplicate
		}
		o.settle(m, st)
	}
}

// pending returns the pending message id, or nil.
func (o *outbound) pending(id string) *outMsg { return o.pend[id] }

// oldest returns the oldest pending message, or nil.
func (o *outbound) oldest() *outMsg {
	o.trim()
	if len(o.order) == 0 {
		return nil
	}
	return o.order[0]
}

// expired settles and returns the oldest pending message whose deadline
// now has reached, or returns nil.
func (o *outbound) expired(now time.Time) *outMsg {
	m := o.oldest()
	if m == nil || m.deadline.IsZero() || now.Before(m.deadline) {
		return nil
	}
	o.settle(m, Unacked)
	return m
}

// next returns the first ack deadline, or zero.
func (o *outbound) next() time.Time {
	if m := o.oldest(); m != nil {
		return m.deadline
	}
	return time.Time{}
}

// status reports a message's state.
func (o *outbound) status(id string) State {
	if _, ok := o.pend[id]; ok {
		return Pending
	}
	return o.settled[id]
}

// clear forgets the pending messages (the session ended); their states
// stay unknown.
func (o *outbound) clear() {
	clear(o.pend)
	clear(o.order)
	o.order = o.order[:0]
}
