package neuro

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// Window is a group of actions that exist together for one decision: the
// counterpart of the official Unity and Godot SDKs' ActionWindow. When it
// opens ([Client.Window]) its context is sent and its actions are
// registered; it may force Neuro to choose one of them, at once, after a
// delay or when a condition holds; and it ends (its actions unregistered)
// when one of its actions succeeds, forced or not, or, before it has
// forced, after a timer or when a condition holds, or when it is
// cancelled. A window's outcome is reported on the [ForceHandle] that
// [Client.Window] returns, whether it forces or not.
//
// ForceWhen and EndWhen are called on the game's side, on the goroutine
// that receives events: by [Client.Poll], at each call, as the official
// SDKs check theirs every frame; by [Client.Next] (and so a
// [Client.Events] loop) about 30 times a second, while it waits and
// between events. A game that receives no events has its conditions
// checked by no one. They are called without any lock held, must be
// quick, and must not call [Client.Close].
type Window struct {
	// Actions are registered when the window opens and unregistered when
	// it ends. There must be at least one, and their names must not be in
	// the client's set already.
	Actions []Action

	// Context, if not empty, is sent right before the actions are
	// registered, so that Neuro reads what the choice is about first.
	// ContextSilent sends it silent (the official SDKs' default is not
	// silent, as is this field's zero value).
	Context       string
	ContextSilent bool

	// Force is the force the window sends, nil for none: the window then
	// only registers its actions, and Neuro uses them when she likes.
	// Force.Actions is filled in from Actions when empty; Force.Timeout
	// counts from when the force takes the slot.
	Force *Force
	// ForceAfter delays the force: it is not sent before the window has
	// been open this long. Zero means no delay.
	ForceAfter time.Duration
	// ForceWhen, if not nil, holds the force (once ForceAfter has passed)
	// until it returns true.
	ForceWhen func() bool

	// EndAfter ends the window as [ForceTimedOut] if it has not forced
	// this long after it opened. Zero means no timer. Once the window has
	// forced, only Force.Timeout ends it early, as in the official SDKs.
	EndAfter time.Duration
	// EndWhen, if not nil, ends the window as [ForceCancelled] when it
	// returns true, if the window has not forced.
	EndWhen func() bool
}

// window is the state of an open window, kept on its ForceHandle.
type window struct {
	names     []string // local names, unregistered when it ends
	policy    ForcePolicy
	hasForce  bool
	forceWhen func() bool
	endWhen   func() bool

	// guarded by c.mu
	delayOver  bool // ForceAfter has passed
	forced     bool // the force was started (queued, held or sent)
	forceTimer *time.Timer
	endTimer   *time.Timer
}

// conditionInterval is how often Next checks the windows' conditions: 30
// times a second, as the Godot SDK polls.
const conditionInterval = time.Second / 30

// Window opens w: it sends w.Context, registers w.Actions and, if w has a
// Force, forces now or arranges to force later. The returned handle
// follows the window: pending while it is open, [ForceCompleted] when one
// of its actions succeeded, [ForceTimedOut] when EndAfter or
// Force.Timeout passed, [ForceCancelled] when EndWhen held or it was
// cancelled ([ForceHandle.Cancel] ends it at any time), [ForceSuperseded]
// when another force replaced its force.
//
// When one of its actions succeeds, the unregister is sent before the
// result, so that single-use actions cannot be retried into a deadlock.
// policy applies when the window forces while another force is
// outstanding: [ForceReplace] supersedes it and [ForceQueue] waits for the
// slot; [ForceRefuse] makes a window that forces at once fail with
// [ErrForceBusy] (nothing is sent), and makes a window whose force is
// deferred wait as with ForceQueue, since no caller is left to refuse.
func (c *Client) Window(w Window, policy ForcePolicy) (*ForceHandle, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.unlockRecording()
	if c.closed {
		return nil, ErrClosed
	}
	h, err := c.openWindowLocked(w, policy)
	if err != nil {
		return nil, err
	}
	c.armWindowLocked(h, w)
	return h, nil
}

// check reports a window that cannot work.
func (w *Window) check() error {
	switch {
	case len(w.Actions) == 0:
		return errors.New("neuro: window: no actions")
	case w.Force == nil && (w.ForceAfter != 0 || w.ForceWhen != nil):
		return errors.New("neuro: window: ForceAfter or ForceWhen without a Force")
	case w.ForceAfter < 0 || w.EndAfter < 0:
		return errors.New("neuro: window: negative ForceAfter or EndAfter")
	}
	return nil
}

// openWindowLocked queues the window's context, registration and (if it
// forces at once) force, in that order, and returns its handle; on error
// nothing is sent or changed. c.mu must be held.
func (c *Client) openWindowLocked(w Window, policy ForcePolicy) (*ForceHandle, error) {
	names := make([]string, len(w.Actions))
	for i, a := range w.Actions {
		if _, ok := c.reg.byName[a.Name]; ok {
			return nil, &ConflictError{Name: a.Name}
		}
		names[i] = a.Name
	}
	added, err := c.reg.add(w.Actions)
	if err != nil {
		return nil, err
	}
	if err := c.checkAddLocked(added); err != nil {
		return nil, err
	}
	var ctxMsg []byte
	if w.Context != "" {
		b, err := c.encode(cmdContext, contextData{Message: w.Context, Silent: w.ContextSilent})
		if err != nil {
			return nil, err
		}
		ctxMsg = b
	}
	now := w.Force != nil && w.ForceAfter == 0 && w.ForceWhen == nil
	if err := c.windowRoomLocked(now, ctxMsg != nil, policy); err != nil {
		return nil, err
	}
	c.reg.commit(added)
	h := &ForceHandle{c: c, done: make(chan struct{})}
	if w.Force != nil {
		f := *w.Force
		if len(f.Actions) == 0 {
			f.Actions = names
		}
		if h, err = c.newForceLocked(f); err != nil {
			c.reg.remove(names) // never sent
			return nil, err
		}
	}
	if ctxMsg != nil {
		c.pushLocked(queued{cmd: cmdContext, b: ctxMsg}, false) // room checked
	}
	c.sendDiffLocked(nil, added)
	h.win = &window{names: names, policy: policy, hasForce: w.Force != nil,
		forceWhen: w.ForceWhen, endWhen: w.EndWhen, delayOver: w.ForceAfter == 0}
	c.windows = append(c.windows, h)
	if now {
		h.win.forced = true
		c.placeForceLocked(h, policy) // cannot fail: room checked
	}
	return h, nil
}

// windowRoomLocked checks, before anything is queued, that a window's
// context and immediate force will fit, so that opening it is all or
// nothing. c.mu must be held.
func (c *Client) windowRoomLocked(forceNow, context bool, policy ForcePolicy) error {
	need := 0
	if context {
		need++
	}
	if forceNow {
		switch {
		case c.force == nil || policy == ForceReplace:
			need++
		case policy == ForceRefuse:
			return ErrForceBusy
		case len(c.forceQ) >= c.o.MaxQueue:
			return fmt.Errorf("neuro: window: force: %w", ErrQueueFull)
		}
	}
	if n := c.boundedLocked(); n+need > c.o.MaxQueue {
		return fmt.Errorf("neuro: window: %w: %d messages waiting", ErrQueueFull, n)
	}
	return nil
}

// armWindowLocked starts the window's timers and has its conditions
// watched. c.mu must be held.
func (c *Client) armWindowLocked(h *ForceHandle, w Window) {
	win := h.win
	if win.hasForce && !win.delayOver {
		win.forceTimer = time.AfterFunc(w.ForceAfter, func() {
			c.mu.Lock()
			defer c.unlockRecording()
			if h.outcome.Final() || win.forced {
				return
			}
			win.delayOver = true
			if win.forceWhen == nil {
				c.startWindowForceLocked(h)
				return
			}
			c.wakeReceiverLocked() // ForceWhen is watched from now on
		})
	}
	if w.EndAfter > 0 && !win.forced {
		win.endTimer = time.AfterFunc(w.EndAfter, func() {
			c.mu.Lock()
			defer c.unlockRecording()
			if !h.outcome.Final() && !win.forced {
				c.endForceLocked(h, ForceTimedOut, true)
				c.advanceForcesLocked()
			}
		})
	}
	if win.watchedLocked() {
		c.wakeReceiverLocked()
	}
}

// watchedLocked reports whether one of the window's conditions is due to
// be checked. c.mu must be held.
func (win *window) watchedLocked() bool {
	if win.forced {
		return false
	}
	return win.endWhen != nil || win.hasForce && win.delayOver && win.forceWhen != nil
}

// startWindowForceLocked sends or queues the window's force. The policy
// ForceRefuse waits for the slot like ForceQueue: nobody is left to
// refuse. c.mu must be held.
func (c *Client) startWindowForceLocked(h *ForceHandle) {
	win := h.win
	win.forced = true
	if win.endTimer != nil {
		win.endTimer.Stop()
	}
	policy := win.policy
	if policy == ForceRefuse {
		policy = ForceQueue
	}
	if err := c.placeForceLocked(h, policy); err != nil {
		// Only a full queue fails here; the ForceUpdate tells the game.
		c.noteLocked(jsonl.Out, "window cancelled: its force could not be queued: "+err.Error(), nil)
		c.endForceLocked(h, ForceCancelled, true)
		c.advanceForcesLocked()
	}
}

// closeWindowLocked stops an ending window's timers, forgets it, and
// unregisters its actions if asked to. c.mu must be held.
func (c *Client) closeWindowLocked(h *ForceHandle, unregister bool) {
	win := h.win
	for _, t := range []*time.Timer{win.forceTimer, win.endTimer} {
		if t != nil {
			t.Stop()
		}
	}
	c.windows = slices.DeleteFunc(c.windows, func(x *ForceHandle) bool { return x == h })
	if unregister && !c.closed {
		c.sendDiffLocked(c.reg.remove(win.names), nil)
	}
}

// windowOfLocked returns the open window that holds the action with the
// local name n, if any. c.mu must be held.
func (c *Client) windowOfLocked(n string) *ForceHandle {
	for _, h := range c.windows {
		if slices.Contains(h.win.names, n) {
			return h
		}
	}
	return nil
}

// wakeReceiverLocked has a waiting Next look at the windows again.
// c.mu must be held.
func (c *Client) wakeReceiverLocked() {
	close(c.winChanged)
	c.winChanged = make(chan struct{})
}

// watchingLocked reports whether any open window has a condition to
// check. c.mu must be held.
func (c *Client) watchingLocked() bool {
	return slices.ContainsFunc(c.windows, func(h *ForceHandle) bool { return h.win.watchedLocked() })
}

// checkWindows evaluates the open windows' conditions, without the lock,
// and forces or ends those whose condition holds. It runs on the game's
// side: from Poll, or from Next.
func (c *Client) checkWindows() {
	type due struct {
		h                  *ForceHandle
		forceWhen, endWhen func() bool
	}
	c.mu.Lock()
	var ds []due
	for _, h := range c.windows {
		if win := h.win; win.watchedLocked() {
			d := due{h: h, endWhen: win.endWhen}
			if win.hasForce && win.delayOver {
				d.forceWhen = win.forceWhen
			}
			ds = append(ds, d)
		}
	}
	c.mu.Unlock()
	for _, d := range ds {
		force := d.forceWhen != nil && d.forceWhen()
		end := !force && d.endWhen != nil && d.endWhen()
		if !force && !end {
			continue
		}
		c.mu.Lock()
		if h := d.h; !h.outcome.Final() && !h.win.forced {
			if force {
				c.startWindowForceLocked(h)
			} else {
				c.endForceLocked(h, ForceCancelled, true)
				c.advanceForcesLocked()
			}
		}
		c.unlockRecording()
	}
}
