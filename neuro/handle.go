package neuro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
)

// call is one action from Neuro between its arrival and its result.
type call struct {
	gen    uint64
	inv    *Invocation
	action *Action      // a copy taken under c.mu; nil for unknown actions
	force  *ForceHandle // the force this action answers, if any
	done   bool         // answered or dropped; guarded by c.mu
}

// callKey names an action in flight. Ids belong to a connection: a
// restarted server counts from "0" again while a verdict for the old
// server's "0" may still be pending.
type callKey struct {
	gen uint64
	id  string
}

// handleAction runs the pipeline for one incoming action: look the name
// up, parse and schema-validate data, then validate on a goroutine under
// the action's deadline. Anything wrong is answered at once with a failing
// result whose message tells Neuro what to do instead. It is called only
// from the read loop, so one id is never handled twice concurrently.
func (c *Client) handleAction(gen uint64, a *actionMsg, perr error) {
	cl, e := c.admit(gen, a, perr)
	if cl == nil {
		return
	}
	// Her data may be up to ReadLimit: parse and validate it without
	// c.mu, so that a big payload does not stall the game's calls.
	data, err := validateData(a.Name, e.sch, a.Data, a.HasData)
	c.mu.Lock()
	switch {
	case err != nil:
		c.finishLocked(cl, Fail(err.Error()+c.schemaHint(e)), false)
	case cl.action.Validate == nil:
		cl.inv.Data = data
		c.finishLocked(cl, OK(""), true)
	case len(c.inflight) >= c.o.MaxInFlight:
		c.finishLocked(cl, Fail("the game is busy with other actions; try again in a moment"), false)
	default:
		cl.inv.Data = data
		c.inflight[callKey{cl.gen, a.ID}] = cl
		c.wg.Add(1)
		c.mu.Unlock()
		go c.validate(cl)
		return
	}
	c.unlockRecording()
}

// admit checks an incoming action under c.mu: ids already seen are
// ignored, malformed messages and unknown names answered. It returns the
// call to carry on with and its entry, or nil when it is done.
func (c *Client) admit(gen uint64, a *actionMsg, perr error) (*call, *entry) {
	c.mu.Lock()
	if _, done := c.answered[maphash.String(c.idSeed, a.ID)]; done || c.inflight[callKey{gen, a.ID}] != nil {
		c.mu.Unlock()
		c.rec.RecordNote(jsonl.In, "ignored: action id already seen", idJSON(a.ID))
		return nil, nil
	}
	cl := &call{gen: gen, inv: &Invocation{ID: a.ID, Name: a.Name}}
	e := c.reg.byWire[a.Name]
	switch {
	case perr != nil:
		c.finishLocked(cl, Fail("malformed action message: "+perr.Error()), false)
	case e == nil:
		c.finishLocked(cl, Fail(c.unknownMessageLocked(a.Name)), false)
	default:
		act := e.a // a copy: SetActions may swap callbacks meanwhile
		cl.action, cl.inv.Name, cl.inv.wire = &act, e.a.Name, e.wire
		// Only an action that arrives after the force went out answers
		// it; Neuro may act unforced just before a force.
		if h := c.force; h != nil && h.sent && slices.Contains(h.f.Actions, act.Name) {
			cl.force = h
		}
		c.mu.Unlock()
		return cl, e
	}
	c.unlockRecording()
	return nil, nil
}

// validate runs the game's validator under the action's deadline. When the
// deadline passes first, the AfterFunc answers success:false; the
// validator's later verdict is then ignored (never answered twice).
func (c *Client) validate(cl *call) {
	defer c.wg.Done()
	d := cl.action.Timeout
	if d <= 0 {
		d = c.o.ActionTimeout
	}
	ctx, cancel := context.WithTimeout(c.life, d)
	defer cancel()
	fired := make(chan struct{})
	late := func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.finish(cl, Fail(fmt.Sprintf("the game took longer than %v to validate %q; try again", d, cl.inv.wireName())), false)
		}
	}
	stop := context.AfterFunc(ctx, func() { defer close(fired); late() })
	res := cl.action.Validate(ctx, cl.inv)
	if !stop() {
		<-fired // joined, so that Close leaves nothing running
	} else {
		// The deadline may have passed (the validator saw it) before the
		// AfterFunc started: stopped, it would never answer, and the
		// validator's late verdict would win. Seen under qemu.
		late()
	}
	if c.life.Err() != nil {
		return // closing: the connection is gone, nothing to answer
	}
	c.finish(cl, res, true)
}

func (c *Client) finish(cl *call, res Result, executable bool) {
	c.mu.Lock()
	c.finishLocked(cl, res, executable)
	c.unlockRecording()
}

// recNote is a recorder note taken while c.mu was held.
type recNote struct {
	dir  jsonl.Direction
	text string
	msg  []byte
}

// noteLocked queues a recorder note until c.mu is released: the recorder
// writes to the game's io.Writer, which must never run under c.mu. c.mu
// must be held.
func (c *Client) noteLocked(dir jsonl.Direction, text string, msg []byte) {
	c.notes = append(c.notes, recNote{dir, text, msg})
}

// unlockRecording releases c.mu, then writes the notes queued under it.
func (c *Client) unlockRecording() {
	notes := c.notes
	c.notes = nil
	c.mu.Unlock()
	for _, n := range notes {
		c.rec.RecordNote(n.dir, n.text, n.msg)
	}
}

// finishLocked answers an action exactly once: force bookkeeping (a
// completed window unregisters its actions first, so a single-use action
// cannot be retried into a deadlock), the result, then the execution
// event. A call of a lost connection is dropped, and its id is not
// remembered: the next server may use it again. c.mu must be held.
func (c *Client) finishLocked(cl *call, res Result, executable bool) {
	if cl.done {
		return
	}
	cl.done = true
	id := cl.inv.ID
	delete(c.inflight, callKey{cl.gen, id})
	if cl.gen != c.gen || !c.connected {
		c.noteLocked(jsonl.Out, "dropped: result for an action of a lost connection", idJSON(id))
		return
	}
	c.rememberLocked(id)
	exec := executable && res.Success && !res.NoExecute
	if exec && c.events.Full() {
		res, exec = Fail("the game is busy; try again in a moment"), false
	}
	if cl.force != nil && cl.force == c.force {
		c.forceResultLocked(cl.force, res.Success)
	}
	if res.Success && cl.action != nil {
		// A window whose action succeeded, forced or not, has done its
		// job, as in the official SDKs.
		if h := c.windowOfLocked(cl.action.Name); h != nil {
			c.endForceLocked(h, ForceCompleted, true)
		}
	}
	b := c.mustEncode(cmdResult, resultData{ID: id, Success: res.Success, Message: res.Message})
	c.pushLocked(queued{cmd: cmdResult, b: b}, false)
	c.advanceForcesLocked()
	if exec {
		cl.inv.Value = res.Value
		c.emitLocked(cl.inv, cl.action.Execute)
	}
}

// rememberLocked notes that id was answered, forgetting the oldest of
// the last answeredMemory ids. A 64-bit hash stands for the id, so the
// memory is 8 KiB whatever the ids' length; a new id is taken for one of
// the 1024 with a chance of about 2^-54. c.mu must be held.
func (c *Client) rememberLocked(id string) {
	if c.ansLen == len(c.ansRing) {
		delete(c.answered, c.ansRing[c.ansNext])
	} else {
		c.ansLen++
	}
	h := maphash.String(c.idSeed, id)
	c.ansRing[c.ansNext] = h
	c.ansNext = (c.ansNext + 1) % len(c.ansRing)
	c.answered[h] = struct{}{}
}

// unknownMessageLocked tells Neuro that the action name is not in the set,
// and what is. An action unregistered a moment ago (it crossed the
// unregister on the wire, or a window just ended) is named as such, as the
// official SDKs do. c.mu must be held.
func (c *Client) unknownMessageLocked(name string) string {
	names := make([]string, 0, len(c.reg.order))
	for _, e := range c.reg.all() {
		names = append(names, e.wire)
	}
	what := "unknown action " + peertext.Quote(name, peertext.LogBytes) // her text, clipped (issue #31)
	if at, ok := c.gone[name]; ok && time.Since(at) < goneMemory {
		what = fmt.Sprintf("action %q was unregistered a moment ago and can no longer be used", name)
	}
	if len(names) == 0 {
		return what + "; no actions are available right now"
	}
	return what + "; available actions: " + strings.Join(names, ", ")
}

// schemaHint appends the expected schema (short ones only) to a data error.
func (c *Client) schemaHint(e *entry) string {
	if len(e.a.Schema) == 0 || len(e.a.Schema) > 300 {
		return ""
	}
	return "; expected data matching " + string(e.a.Schema)
}

func idJSON(id string) []byte {
	b, _ := json.Marshal(map[string]string{"id": id})
	return b
}
