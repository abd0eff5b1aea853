package neuro

import (
	"fmt"
	"slices"
	"time"
)

// Register adds actions to the client's set and, when connected, sends one
// actions/register with the new ones. Re-registering an identical
// definition is a no-op; a different definition of a name already in the
// set is a *[ConflictError] (the server would keep the first), as is a bad
// name (*[NameError]) or schema (*[SchemaError]). On error nothing is
// added.
func (c *Client) Register(actions ...Action) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	added, err := c.reg.add(actions)
	if err != nil {
		return err
	}
	if err := c.checkAddLocked(added); err != nil {
		return err
	}
	c.reg.commit(added)
	c.sendDiffLocked(nil, added)
	return nil
}

// Unregister removes the named actions (local names, without prefix) and,
// when connected, sends one actions/unregister. Unknown names are ignored.
// A force whose actions are all gone ends as [ForceCancelled]. For 10 s,
// an action of Neuro's that names one of them (it crossed the unregister)
// is answered as unregistered a moment ago, not as unknown.
func (c *Client) Unregister(names ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.sendDiffLocked(c.reg.remove(names), nil)
	c.pruneForcesLocked()
	return nil
}

// SetActions makes actions the whole action set and sends the minimal
// diff: unregister what is gone, register what is new. A changed
// definition is unregistered and registered again. Frequent changes slow
// Neuro down: register gameplay-wide actions once, and prefer a broad
// parameter with game-side validation over re-registering enums.
func (c *Client) SetActions(actions ...Action) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if err := c.checkSizeLocked(actions); err != nil {
		return err
	}
	unreg, reg, err := c.reg.set(actions)
	if err != nil {
		return err
	}
	c.sendDiffLocked(unreg, reg)
	c.pruneForcesLocked()
	return nil
}

// Actions returns the local names of the current action set, in
// registration order.
func (c *Client) Actions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reg.names()
}

// sendDiffLocked queues the diff when connected. While disconnected
// nothing is queued: the next connect sends startup (which clears the
// server's set) and the whole set. Either way it remembers what was
// unregistered, for a while. c.mu must be held.
func (c *Client) sendDiffLocked(unreg []string, reg []*entry) {
	c.rememberGoneLocked(unreg, reg)
	if !c.connected {
		return
	}
	if len(unreg) > 0 {
		b := c.mustEncode(cmdUnregister, unregisterData{ActionNames: slices.Clone(unreg)})
		c.pushLocked(queued{cmd: cmdUnregister, b: b}, false)
	}
	if len(reg) > 0 {
		b := c.mustEncode(cmdRegister, registerData{Actions: wireActions(reg)})
		c.pushLocked(queued{cmd: cmdRegister, b: b}, false)
	}
}

// goneMemory is how long an unregistered action is answered as such rather
// than as unknown: the official Unity SDK keeps its "recently
// unregistered" actions for 10 s. goneMax bounds how many are kept.
const (
	goneMemory = 10 * time.Second
	goneMax    = 256
)

// rememberGoneLocked notes the wire names just unregistered, and forgets
// those registered again. c.mu must be held.
func (c *Client) rememberGoneLocked(unreg []string, reg []*entry) {
	now := time.Now()
	if len(unreg) > 0 {
		for n, at := range c.gone {
			if now.Sub(at) >= goneMemory {
				delete(c.gone, n)
			}
		}
	}
	for _, n := range unreg {
		if len(c.gone) >= goneMax {
			oldest := ""
			for m, at := range c.gone {
				if oldest == "" || at.Before(c.gone[oldest]) {
					oldest = m
				}
			}
			delete(c.gone, oldest)
		}
		c.gone[n] = now
	}
	for _, e := range reg { // a redefinition is unregistered and registered
		delete(c.gone, e.wire)
	}
}

// checkAddLocked refuses to add entries to the set when its full
// registration (sent on every connect) would then exceed ReadLimit.
// c.mu must be held.
func (c *Client) checkAddLocked(added []*entry) error {
	return c.checkRegisterLocked(c.reg.registerBytes(added))
}

// checkSizeLocked refuses as as the whole set when its full registration
// would exceed ReadLimit. c.mu must be held.
func (c *Client) checkSizeLocked(as []Action) error {
	n := 0
	for _, a := range as {
		n += (&entry{a: a, wire: c.o.Prefix + a.Name}).sized().size
	}
	return c.checkRegisterLocked(n + max(len(as)-1, 0))
}

// checkRegisterLocked refuses an actions/register whose definitions take
// defs bytes when the whole message would exceed ReadLimit.
func (c *Client) checkRegisterLocked(defs int) error {
	if n := c.regEnvelope + defs; c.o.tooBig(n) {
		return fmt.Errorf("%w: registering the action set takes %d bytes, limit %d", ErrMessageTooBig, n, c.o.ReadLimit)
	}
	return nil
}
