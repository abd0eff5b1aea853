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
	ForceCancelled                      // Cancel, Close, or all its actions unregistered
	ForceTimedOut                       // Force.Timeout passed
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
	c      *Client
	f      Force
	msg    []byte
	window []string // action names to unregister when the force ends
	done   chan struct{}
	timer  *time.Timer

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
// Neuro already chose is still answered. A window's actions are
// unregistered (the spec only says a force naming no registered action is
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
func (c *Client) Force(f Force, policy ForcePolicy) (*ForceHandle, error) {
	return c.force1(f, policy, nil)
}

// Window is an action window: the actions exist only for one force. See
// [Client.Window].
type Window struct {
	Actions []Action
	Force   Force // Force.Actions is filled in from Actions when empty
}

// Window registers w's actions, forces Neuro to choose one, and
// unregisters them when the force ends. When an action succeeds, the
// unregister is sent before the result, so that single-use actions cannot
// be retried into a deadlock. The names must not already be in the set.
func (c *Client) Window(w Window, policy ForcePolicy) (*ForceHandle, error) {
	names := make([]string, len(w.Actions))
	for i, a := range w.Actions {
		names[i] = a.Name
	}
	f := w.Force
	if len(f.Actions) == 0 {
		f.Actions = names
	}
	c.mu.Lock()
	for _, n := range names {
		if _, ok := c.reg.byName[n]; ok {
			c.mu.Unlock()
			return nil, &ConflictError{Name: n}
		}
	}
	c.mu.Unlock()
	if err := c.Register(w.Actions...); err != nil {
		return nil, err
	}
	h, err := c.force1(f, policy, names)
	if err != nil {
		c.Unregister(names...)
	}
	return h, err
}

func (c *Client) force1(f Force, policy ForcePolicy, window []string) (*ForceHandle, error) {
	if len(f.Actions) == 0 {
		return nil, fmt.Errorf("neuro: force: no actions (the server would drop it)")
	}
	if f.Priority < PriorityLow || f.Priority > PriorityCritical {
		return nil, fmt.Errorf("neuro: force: invalid priority %d", int(f.Priority))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
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
	h := &ForceHandle{c: c, f: f, msg: msg, window: window, done: make(chan struct{})}
	if c.force != nil {
		switch policy {
		case ForceQueue:
			if len(c.forceQ) >= c.o.MaxQueue {
				return nil, fmt.Errorf("neuro: force: %w", ErrQueueFull)
			}
			c.forceQ = append(c.forceQ, h)
			return h, nil
		case ForceReplace:
			c.endForceLocked(c.force, ForceSuperseded, true)
		default:
			return nil, ErrForceBusy
		}
	}
	if err := c.startForceLocked(h); err != nil {
		return nil, err
	}
	return h, nil
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

// endForceLocked ends h (outstanding or queued) with a final outcome; the
// caller then runs advanceForcesLocked. unregister says whether a window's actions
// are unregistered now (finishLocked already did it before the result).
func (c *Client) endForceLocked(h *ForceHandle, o ForceOutcome, unregister bool) {
	if h.outcome.Final() {
		return
	}
	h.outcome = o
	if h.timer != nil {
		h.timer.Stop()
	}
	close(h.done)
	if unregister && len(h.window) > 0 && !c.closed {
		c.sendDiffLocked(c.reg.remove(h.window), nil)
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

// pruneForcesLocked cancels forces none of whose actions remain.
func (c *Client) pruneForcesLocked() {
	live := func(h *ForceHandle) bool {
		return slices.ContainsFunc(h.f.Actions, func(n string) bool { _, ok := c.reg.byName[n]; return ok })
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
