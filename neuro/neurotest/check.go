package neurotest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/internal/wire"
)

// checker thresholds, as in the Gary conformance tool.
const (
	lateStartup   = 500 * time.Millisecond
	lateResult    = 500 * time.Millisecond
	resultTimeout = 5 * time.Second
)

// checker reports what a conformance tool (Gary) would say about a game's
// traffic, with Gary's keys and severities: startup missing or repeated, the game renamed, forces while one is
// pending or naming unknown actions, late (500 ms) or timed-out (5 s)
// results, register conflicts and duplicates (a registration that follows
// the server's actions/reregister_all answers it and is no duplicate), and
// schema problems. Feed it every message
// with the time it was seen; it is passive (no goroutines, no clock) and
// not safe for concurrent use. The zero value is ready to use.
//
// [Server] runs one over its traffic; tests assert on [Server.Findings]
// by [neuro.Finding] Key.
type checker struct {
	fs []neuro.Finding

	game        string
	connectedAt time.Time
	sawAny      bool // any game message on this connection
	sawStartup  bool
	actions     map[string]wire.Action
	known       map[string]bool // every name ever registered
	force       []string        // names of the outstanding force; nil if none
	pending     map[string]pendingCheck
	reregister  bool // the server asked for every action again
}

type pendingCheck struct {
	at     time.Time
	name   string
	forced bool
}

// connect marks the start of a new connection at time at.
func (c *checker) connect(at time.Time) {
	c.connectedAt, c.sawAny, c.sawStartup = at, false, false
	c.force = nil
	c.pending = nil
}

// findings returns the findings so far, in the order they were found. The
// slice is a copy.
func (c *checker) findings() []neuro.Finding { return slices.Clone(c.fs) }

// finish reports results still missing at time at as timed out (when more
// than 5 s old).
func (c *checker) finish(at time.Time) {
	ids := make([]string, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if p := c.pending[id]; at.Sub(p.at) > resultTimeout {
			c.add("perf/timeout/action_result", neuro.SeverityError, p.name, fmt.Sprintf("no result for action id %q after %v", id, at.Sub(p.at).Round(time.Millisecond)))
			delete(c.pending, id)
		}
	}
}

func (c *checker) add(key string, sev neuro.Severity, action, msg string) {
	c.fs = append(c.fs, neuro.Finding{Key: key, Severity: sev, Action: action, Message: msg})
}

// fromNeuro observes a Neuro-to-game message.
func (c *checker) fromNeuro(at time.Time, msg []byte) {
	var m wire.In
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	switch m.Command {
	case wire.CmdReregisterAll:
		c.reregister = true // the next registration answers it
		return
	case wire.CmdAction:
	default:
		return
	}
	a, _ := wire.DecodeAction(m.Data)
	if a == nil {
		return
	}
	if c.pending == nil {
		c.pending = map[string]pendingCheck{}
	}
	c.pending[a.ID] = pendingCheck{at: at, name: a.Name, forced: slices.Contains(c.force, a.Name)}
}

// fromGame observes a game-to-Neuro message.
func (c *checker) fromGame(at time.Time, msg []byte) {
	var m struct {
		Command string          `json:"command"`
		Game    *string         `json:"game"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.Command == "" {
		c.add("prot/invalid_message", neuro.SeverityError, "", "message is not a JSON object with a command")
		return
	}
	c.checkGame(m.Game)
	first := !c.sawAny
	c.sawAny = true
	if m.Command != wire.CmdStartup && first {
		c.add("prot/startup/missing", neuro.SeverityWarning, "", fmt.Sprintf("first message was %q, not startup", m.Command))
	}
	switch m.Command {
	case wire.CmdStartup:
		c.startup(at)
	case wire.CmdRegister:
		var d wire.Register
		if c.decode(m.Command, m.Data, &d) {
			c.register(d.Actions)
		}
	case wire.CmdUnregister:
		var d wire.Unregister
		if !c.decode(m.Command, m.Data, &d) {
			return
		}
		for _, n := range d.ActionNames {
			_, active := c.actions[n]
			switch {
			case !active && c.known[n]:
				c.add("prot/unregister/inactive", neuro.SeverityInfo, n, "unregistering an action that is already unregistered")
			case !active:
				c.add("prot/unregister/unknown", neuro.SeverityWarning, n, "unregistering an action that was never registered (state out of sync after a reconnect?)")
			}
			delete(c.actions, n)
		}
	case wire.CmdForce:
		var d wire.Force
		if c.decode(m.Command, m.Data, &d) {
			c.forceMsg(d)
		}
	case wire.CmdResult:
		var d wire.Result
		if c.decode(m.Command, m.Data, &d) {
			c.result(at, d)
		}
	}
}

// decode unmarshals the data a command requires, reporting it missing or
// of the wrong shape as prot/invalid_message.
func (c *checker) decode(cmd string, data json.RawMessage, v any) bool {
	if len(data) == 0 || string(data) == "null" {
		c.add("prot/invalid_message", neuro.SeverityError, "", cmd+" without data")
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		c.add("prot/invalid_message", neuro.SeverityError, "", fmt.Sprintf("%s data: %v", cmd, err))
		return false
	}
	return true
}

func (c *checker) checkGame(g *string) {
	switch {
	case g == nil || *g == "":
		c.add("prot/invalid_message", neuro.SeverityError, "", `message without "game"`)
	case c.game == "":
		c.game = *g
	case c.game != *g:
		c.add("prot/v1/game_renamed", neuro.SeverityError, "", fmt.Sprintf("game renamed from %q to %q", c.game, *g))
	}
}

func (c *checker) startup(at time.Time) {
	if c.sawStartup {
		c.add("prot/startup/multiple", neuro.SeverityWarning, "", "startup sent again on the same connection; it may reset Neuro's state")
	}
	if !c.connectedAt.IsZero() && at.Sub(c.connectedAt) > lateStartup {
		c.add("perf/late/startup", neuro.SeverityInfo, "", fmt.Sprintf("startup %v after connect", at.Sub(c.connectedAt).Round(time.Millisecond)))
	}
	c.sawStartup = true
	c.actions = map[string]wire.Action{}
}

func (c *checker) register(as []wire.Action) {
	if c.actions == nil {
		c.actions = map[string]wire.Action{}
	}
	answer := c.reregister // a registration asked for is no duplicate
	c.reregister = false
	for _, a := range as {
		prev, ok := c.actions[a.Name]
		switch {
		case ok && answer && wire.SameDefinition(prev, a):
		case ok && wire.SameDefinition(prev, a):
			c.add("perf/register/identical_duplicate", neuro.SeverityInfo, a.Name, "action registered again with the same definition")
		case ok:
			c.add("prot/v1/register/conflict", neuro.SeverityWarning, a.Name, "action registered again with a different definition; the first one is kept")
		default:
			c.actions[a.Name] = a
			if c.known == nil {
				c.known = map[string]bool{}
			}
			c.known[a.Name] = true
			c.fs = append(c.fs, neuro.LintAction(neuro.Action{Name: a.Name, Description: a.Description, Schema: a.Schema})...)
		}
	}
}

func (c *checker) forceMsg(d wire.Force) {
	if c.force != nil {
		c.add("prot/force/multiple", neuro.SeverityError, "", "force sent while another force is still outstanding")
	}
	if len(c.pending) > 0 {
		c.add("prot/force/while_pending_result", neuro.SeverityError, "", "force sent while an action result is pending")
	}
	if len(d.ActionNames) == 0 {
		c.add("prot/force/empty", neuro.SeverityError, "", "force with no action names")
		return
	}
	var bad []string
	for _, n := range d.ActionNames {
		if _, ok := c.actions[n]; !ok {
			bad = append(bad, n)
		}
	}
	switch {
	case len(bad) == len(d.ActionNames):
		c.add("prot/force/all_invalid", neuro.SeverityError, "", fmt.Sprintf("no forced action is registered: %q; the force is dropped", bad))
		return
	case len(bad) > 0:
		c.add("prot/force/some_invalid", neuro.SeverityWarning, "", fmt.Sprintf("forced actions not registered: %q", bad))
	}
	c.force = slices.Clone(d.ActionNames)
}

func (c *checker) result(at time.Time, d wire.Result) {
	p, ok := c.pending[d.ID]
	if !ok {
		c.add("prot/result/unexpected", neuro.SeverityWarning, "", fmt.Sprintf("result for unknown or already answered id %q", d.ID))
		return
	}
	delete(c.pending, d.ID)
	if !d.Success && d.Message == "" {
		c.add("prot/result/error_nomessage", neuro.SeverityWarning, p.name, "failed result without a message; tell Neuro what to do instead")
	}
	switch lat := at.Sub(p.at); {
	case lat > resultTimeout:
		c.add("perf/timeout/action_result", neuro.SeverityError, p.name, fmt.Sprintf("result after %v", lat.Round(time.Millisecond)))
	case lat > lateResult:
		c.add("perf/late/action_result", neuro.SeverityWarning, p.name, fmt.Sprintf("result after %v; send a validation result at once and a context later", lat.Round(time.Millisecond)))
	}
	if p.forced && d.Success {
		c.force = nil
	}
}
