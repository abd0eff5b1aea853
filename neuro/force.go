package neuro

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Force asks Neuro to pick one of Actions now (actions/force).
type Force struct {
	// Query tells her what to do ("It is your turn. Place your mark.").
	Query string
	// State describes the game (Markdown recommended). Optional.
	State string
	// Ephemeral forgets Query and State after the force.
	Ephemeral bool
	// Priority; the zero value is [PriorityLow], right for turn-based games.
	Priority Priority
	// Actions are local names (without prefix), all in the client's set.
	Actions []string
	// Timeout ends the force as [ForceTimedOut] if no action completes it
	// in time (the server drops forces whose actions are gone, which would
	// otherwise wait forever). Zero means no timeout.
	Timeout time.Duration
}

// ForcePolicy says what [Client.Force] does while another force is
// outstanding.
type ForcePolicy int

// Policies for a force that meets a busy slot.
const (
	ForceRefuse  ForcePolicy = iota // return ErrForceBusy
	ForceQueue                      // wait for the slot (bounded by MaxQueue)
	ForceReplace                    // supersede the outstanding force
)

// ForceOutcome is the state of a force. Pending and Retrying are not final.
type ForceOutcome int

// Force outcomes.
const (
	ForcePending    ForceOutcome = iota // queued or sent, no verdict yet
	ForceRetrying                       // an action failed validation; Neuro retries
	ForceCompleted                      // an action succeeded
	ForceSuperseded                     // replaced by a newer force (ForceReplace)
	ForceCancelled                      // Cancel, Close, all its actions unregistered, or a window's EndWhen
	ForceTimedOut                       // Force.Timeout, or a window's EndAfter, passed
)

var outcomeNames = [...]string{"pending", "retrying", "completed", "superseded", "cancelled", "timed out"}

// String returns the outcome's name.
func (o ForceOutcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return fmt.Sprintf("ForceOutcome(%d)", int(o))
	}
	return outcomeNames[o]
}

// Final reports whether the force has ended.
func (o ForceOutcome) Final() bool { return o >= ForceCompleted }

// ForceHandle follows one force. All methods may be called concurrently.
type ForceHandle struct {
	c     *Client
	f     Force
	msg   []byte
	win   *window // the window this force belongs to, if any
	done  chan struct{}
	timer *time.Timer

	// guarded by c.mu
	outcome  ForceOutcome
	failures int
	sent     bool // written on the current connection
}

// Done is closed when the force ends.
func (h *ForceHandle) Done() <-chan struct{} { return h.done }

// Outcome returns the current state.
func (h *ForceHandle) Outcome() ForceOutcome {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.outcome
}

// Failures returns how many of Neuro's answers to this force failed
// validation (each one makes her retry).
func (h *ForceHandle) Failures() int {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.failures
}

// Wait blocks until the force ends and returns its final outcome, or ctx's
// error if ctx ends first (the force goes on).
func (h *ForceHandle) Wait(ctx context.Context) (ForceOutcome, error) {
	select {
	case <-h.done:
		return h.Outcome(), nil
	case <-ctx.Done():
		return h.Outcome(), fmt.Errorf("neuro: wait for force: %w", ctx.Err())
	}
}

// Cancel gives the force up locally: it ends as [ForceCancelled] and the
// slot is free. The API has no message to withdraw a force, so an action
// Neuro already chose is still answered. For a window, Cancel ends it
// (the official SDKs' End): its actions are unregistered, and its force,
// if not sent yet, never is (the spec only says a force naming no registered action is
// dropped; that the server also drops one whose actions go away later is
// assumed, and neurotest behaves so). A plain force that was already sent
// stays with Neuro: the next force sent (including a queued one, which
// starts at once) replaces it on her side, which conformance tools report
// as prot/force/multiple. Prefer [Client.Window] when a force may need
// cancelling.
func (h *ForceHandle) Cancel() {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endForceLocked(h, ForceCancelled, true)
	c.advanceForcesLocked()
}

// Force sends a force, or deals with a busy slot per policy. Every name in
// f.Actions must be in the client's set (else [ErrUnknownAction]).
//
// A force is held while one of Neuro's actions awaits its result (she
// cannot take a force then), and that result is sent first. Only actions
// that arrive after the force was sent count as answering it.
func (c *Client) Force(f Force, policy ForcePolicy) (*ForceHandle, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	h, err := c.newForceLocked(f)
	if err != nil {
		return nil, err
	}
	if err := c.placeForceLocked(h, policy); err != nil {
		return nil, err
	}
	return h, nil
}

// newForceLocked checks f and encodes its message; every name in
// f.Actions must be in the set. c.mu must be held.
func (c *Client) newForceLocked(f Force) (*ForceHandle, error) {
	if len(f.Actions) == 0 {
		return nil, fmt.Errorf("neuro: force: no actions (the server would drop it)")
	}
	if f.Priority < PriorityLow || f.Priority > PriorityCritical {
		return nil, fmt.Errorf("neuro: force: invalid priority %d", int(f.Priority))
	}
	names := make([]string, len(f.Actions))
	for i, n := range f.Actions {
		e, ok := c.reg.byName[n]
		if !ok {
			return nil, fmt.Errorf("neuro: force: %w: %q is not registered", ErrUnknownAction, n)
		}
		names[i] = e.wire
	}
	pr := ""
	if f.Priority != PriorityLow {
		pr = f.Priority.String()
	}
	msg, err := c.encode(cmdForce, forceData{State: f.State, Query: f.Query, EphemeralContext: f.Ephemeral, Priority: pr, ActionNames: names})
	if err != nil {
		return nil, err
	}
	f.Actions = slices.Clone(f.Actions)
	return &ForceHandle{c: c, f: f, msg: msg, done: make(chan struct{})}, nil
}

// placeForceLocked starts h, or deals with a busy slot per policy. c.mu
// must be held.
func (c *Client) placeForceLocked(h *ForceHandle, policy ForcePolicy) error {
	if c.force != nil {
		switch policy {
		case ForceQueue:
			if len(c.forceQ) >= c.o.MaxQueue {
				return fmt.Errorf("neuro: force: %w", ErrQueueFull)
			}
			c.forceQ = append(c.forceQ, h)
			return nil
		case ForceReplace:
			c.endForceLocked(c.force, ForceSuperseded, true)
		default:
			return ErrForceBusy
		}
	}
	return c.startForceLocked(h)
}

// startForceLocked makes h the outstanding force and queues its message.
func (c *Client) startForceLocked(h *ForceHandle) error {
	if err := c.pushLocked(queued{cmd: cmdForce, b: h.msg, force: h}, true); err != nil {
		return fmt.Errorf("neuro: force: %w", err)
	}
	c.force = h
	if h.f.Timeout > 0 {
		h.timer = time.AfterFunc(h.f.Timeout, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.endForceLocked(h, ForceTimedOut, true)
			c.advanceForcesLocked()
		})
	}
	return nil
}

// endForceLocked ends h (outstanding, queued, or a window's that has not
// forced yet) with a final outcome; the caller then runs
// advanceForcesLocked. unregister says whether a window's actions are
// unregistered now (finishLocked passes true before queueing the result,
// so they go first).
func (c *Client) endForceLocked(h *ForceHandle, o ForceOutcome, unregister bool) {
	if h.outcome.Final() {
		return
	}
	h.outcome = o
	if h.timer != nil {
		h.timer.Stop()
	}
	close(h.done)
	if h.win != nil {
		c.closeWindowLocked(h, unregister)
	}
	if !c.closed {
		c.emitLocked(ForceUpdate{Force: h, Outcome: o}, nil)
	}
	if c.force != h {
		c.forceQ = slices.DeleteFunc(c.forceQ, func(x *ForceHandle) bool { return x == h })
		return
	}
	// Drop its message if it never left, so it is not sent late.
	c.queue = slices.DeleteFunc(c.queue, func(q queued) bool { return q.force == h })
	c.force = nil
}

// advanceForcesLocked starts the next queued force if the slot is free.
// Callers run it after the result that freed the slot was queued, so the
// next force never overtakes that result.
func (c *Client) advanceForcesLocked() {
	for len(c.forceQ) > 0 && c.force == nil && !c.closed {
		next := c.forceQ[0]
		c.forceQ = c.forceQ[1:]
		if err := c.startForceLocked(next); err != nil {
			c.endForceLocked(next, ForceCancelled, true)
		}
	}
}

// forceResultLocked updates the outstanding force h for a result of an
// action that answered it: success completes it (unregistering a window
// first), failure means Neuro retries.
func (c *Client) forceResultLocked(h *ForceHandle, success bool) {
	if !success {
		h.failures++
		h.outcome = ForceRetrying
		c.emitLocked(ForceUpdate{Force: h, Outcome: ForceRetrying}, nil)
		return
	}
	c.endForceLocked(h, ForceCompleted, true)
}

// pruneForcesLocked cancels forces none of whose actions remain, and
// windows whose actions are all gone.
func (c *Client) pruneForcesLocked() {
	live := func(h *ForceHandle) bool {
		return slices.ContainsFunc(h.f.Actions, func(n string) bool { _, ok := c.reg.byName[n]; return ok })
	}
	for _, h := range slices.Clone(c.windows) {
		if !slices.ContainsFunc(h.win.names, func(n string) bool { _, ok := c.reg.byName[n]; return ok }) {
			c.endForceLocked(h, ForceCancelled, true)
		}
	}
	for _, h := range slices.Clone(c.forceQ) {
		if !live(h) {
			c.endForceLocked(h, ForceCancelled, true)
		}
	}
	if h := c.force; h != nil && !live(h) {
		c.endForceLocked(h, ForceCancelled, true)
	}
	c.advanceForcesLocked()
}
