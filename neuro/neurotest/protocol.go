package neurotest

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/internal/wire"
)

// receive handles one game-to-Neuro message from sc. Malformed messages
// are recorded and ignored, as the API says the server does; messages of a
// connection dropped by [Server.Restart] are not seen at all. It is one
// flat switch over the commands, hence its length.
func (s *Server) receive(sc *sconn, b []byte) {
	s.mu.Lock()
	stale := sc.epoch != s.epoch
	s.mu.Unlock()
	if stale {
		return
	}
	s.rec.Record(jsonl.In, b)
	var m struct {
		Command string          `json:"command"`
		Game    string          `json:"game"`
		Data    json.RawMessage `json:"data"`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc.epoch != s.epoch {
		return // restarted meanwhile
	}
	defer s.changedLocked()
	now := time.Now()
	s.checker.fromGame(now, b)
	if json.Unmarshal(b, &m) != nil {
		return
	}
	s.received = append(s.received, Message{Command: m.Command, Game: m.Game, Data: m.Data, At: now})
	switch m.Command {
	case wire.CmdStartup:
		s.startupLocked()
	case wire.CmdContext:
		var d wire.Context
		json.Unmarshal(m.Data, &d)
		c := Context{Message: d.Message, Silent: d.Silent}
		if s.o.Mode == Strict && s.pending != nil {
			s.held = append(s.held, c)
		} else {
			s.contexts = append(s.contexts, c)
		}
	case wire.CmdRegister:
		var d wire.Register
		json.Unmarshal(m.Data, &d)
		for _, a := range d.Actions {
			if s.o.Mode == Randy || s.findLocked(a.Name) < 0 {
				s.actions = append(s.actions, a) // first definition wins
			}
		}
	case wire.CmdUnregister:
		var d wire.Unregister
		json.Unmarshal(m.Data, &d)
		s.actions = slices.DeleteFunc(s.actions, func(a wire.Action) bool { return slices.Contains(d.ActionNames, a.Name) })
	case wire.CmdForce:
		var d wire.Force
		json.Unmarshal(m.Data, &d)
		s.forceLocked(d.ActionNames)
	case wire.CmdResult:
		var d wire.Result
		json.Unmarshal(m.Data, &d)
		s.resultLocked(Result{ID: d.ID, Success: d.Success, Message: d.Message})
	}
}

func (s *Server) findLocked(name string) int {
	return slices.IndexFunc(s.actions, func(a wire.Action) bool { return a.Name == name })
}

func (s *Server) startupLocked() {
	if s.o.Mode == Randy {
		return // Randy only logs startup
	}
	s.actions = nil
	s.force, s.forced = nil, false
	if s.scheduled != nil {
		s.scheduled.Stop()
		s.scheduled = nil
	}
	if !s.o.NoAck {
		a := s.o.Ack
		s.sendLocked(wire.CmdStartup, wire.StartupAck{Session: &wire.Session{
			SessionID: a.SessionID, CharacterID: a.CharacterID, DisplayName: a.DisplayName}})
	}
}

// forceLocked starts a force. Strict: unknown names are ignored, a force
// with none known is dropped, a new force replaces the outstanding one.
// Randy: queued behind a pending result.
func (s *Server) forceLocked(names []string) {
	known := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return s.findLocked(n) < 0 })
	if s.o.Mode == Randy {
		if len(names) == 0 {
			return
		}
		n := names[s.rng.IntN(len(names))]
		if s.forced || s.pending != nil {
			s.randyQ = append(s.randyQ, n)
			return
		}
		s.forced = true
		s.scheduleLocked([]string{n})
		return
	}
	if len(known) == 0 {
		return
	}
	s.force, s.forced = known, true
	s.forceSeq++
	if s.pending == nil {
		s.scheduleLocked(known)
	}
}

// scheduleLocked sends a forced action chosen from names after Delay.
func (s *Server) scheduleLocked(names []string) {
	if s.scheduled != nil {
		s.scheduled.Stop()
	}
	names = slices.Clone(names)
	var t *time.Timer
	t = time.AfterFunc(s.o.Delay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.scheduled != t {
			return
		}
		s.scheduled = nil
		live := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return s.findLocked(n) < 0 })
		if len(live) == 0 {
			// Randy returns silently here and the force is lost; so does a
			// force whose actions were all unregistered.
			s.forced, s.force = false, nil
			s.nextRandyLocked()
			return
		}
		n := live[s.rng.IntN(len(live))]
		s.actLocked(n, s.dataForLocked(n), true)
	})
	s.scheduled = t
}

func (s *Server) dataForLocked(name string) *string {
	if s.nextData != nil {
		d := s.nextData
		s.nextData = nil
		if *d == "" {
			return nil
		}
		return d
	}
	i := s.findLocked(name)
	if i < 0 {
		return nil
	}
	d, ok := fakeData(s.actions[i].Schema, s.rng)
	if !ok {
		return nil
	}
	return &d
}

// actLocked sends an action and makes it the pending one.
func (s *Server) actLocked(name string, data *string, forced bool) string {
	id := itoa(s.nextID)
	s.nextID++
	s.sendLocked(wire.CmdAction, wire.ActionOut{ID: id, Name: name, Data: data})
	p := &pending{id: id, name: name, forced: forced, forceSeq: s.forceSeq}
	if s.pending != nil && s.pending.timer != nil {
		s.pending.timer.Stop()
	}
	s.pending = p
	if s.o.Mode == Strict && s.o.ResultTimeout > 0 {
		p.timer = time.AfterFunc(s.o.ResultTimeout, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.pending != p || s.closed {
				return
			}
			// Timed out: counts as failed, no retry, late result dropped.
			s.pending = nil
			if p.forced && p.forceSeq == s.forceSeq {
				s.force, s.forced = nil, false
			} else if s.force != nil {
				s.scheduleLocked(s.force)
			}
			s.flushHeldLocked()
			s.changedLocked()
		})
	}
	s.changedLocked()
	return id
}

func (s *Server) resultLocked(r Result) {
	p := s.pending
	if p == nil || p.id != r.ID {
		r.Late = true
		s.results = append(s.results, r)
		return
	}
	s.results = append(s.results, r)
	if p.timer != nil {
		p.timer.Stop()
	}
	s.pending = nil
	s.flushHeldLocked()
	current := p.forced && p.forceSeq == s.forceSeq
	switch {
	case current && !r.Success && s.o.Mode == Randy:
		s.scheduleLocked([]string{p.name}) // Randy retries the same action
	case current && !r.Success:
		s.scheduleLocked(s.force) // the whole force is retried
	case current:
		s.force, s.forced = nil, false
		s.nextRandyLocked()
	case s.o.Mode == Strict && s.force != nil:
		s.scheduleLocked(s.force) // a force that arrived meanwhile
	}
}

func (s *Server) nextRandyLocked() {
	if s.o.Mode == Randy && len(s.randyQ) > 0 {
		n := s.randyQ[0]
		s.randyQ = s.randyQ[1:]
		s.forced = true
		s.scheduleLocked([]string{n})
	}
}

func (s *Server) flushHeldLocked() {
	s.contexts = append(s.contexts, s.held...)
	s.held = nil
}

// Act sends an unforced action with fake data generated from the
// action's schema, as Neuro may do at any time, and returns its id.
func (s *Server) Act(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.actLocked(name, s.dataForLocked(name), false)
}

// SendAction sends an unforced action with the given data string verbatim
// (malformed or off-schema on purpose); "" omits the data key. It
// returns the action id.
func (s *Server) SendAction(name, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d *string
	if data != "" {
		d = &data
	}
	return s.actLocked(name, d, false)
}

// NextData makes the next action the fake sends for a force carry data
// verbatim ("" omits it) instead of generated data: injection of malformed
// or off-schema data.
func (s *Server) NextData(data string) {
	s.mu.Lock()
	s.nextData = &data
	s.mu.Unlock()
}

// Send sends a message with the given command and data (nil omits data).
func (s *Server) Send(command string, data any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(command, data)
}

// SendRaw sends b verbatim as one text message.
func (s *Server) SendRaw(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendRawLocked(append([]byte(nil), b...))
}

// SpeechFinished sends speech_finished.
func (s *Server) SpeechFinished(isFinal, cancelled bool, reason string) {
	d := map[string]any{"isFinal": isFinal}
	if cancelled {
		d["cancelled"] = true
		d["reason"] = reason
	}
	s.Send(wire.CmdSpeechFinished, d)
}

// Actions returns the registered action names, in registration order
// (Randy may hold duplicates).
func (s *Server) Actions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.actions))
	for i, a := range s.actions {
		out[i] = a.Name
	}
	return out
}

// Schema returns the registered schema of name (nil if none or unknown).
func (s *Server) Schema(name string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.findLocked(name); i >= 0 {
		return s.actions[i].Schema
	}
	return nil
}

// Received returns a copy of every message received, in order.
func (s *Server) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Commands returns the commands of every message received, in order.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.received))
	for i, m := range s.received {
		out[i] = m.Command
	}
	return out
}

// Results returns every action/result received, in order.
func (s *Server) Results() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.results)
}

// Contexts returns the context messages Neuro took in, in order (held ones
// appear once the pending result arrives or times out).
func (s *Server) Contexts() []Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.contexts)
}

// Pending reports the id of the action awaiting a result, if any.
func (s *Server) Pending() (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		return "", false
	}
	return s.pending.id, true
}

// Forcing reports whether a force is outstanding.
func (s *Server) Forcing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forced
}

// Connects returns how many connections were opened so far.
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// Connections returns how many connections are open now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Findings returns what a conformance tool (Gary) would report about the
// game's traffic so far, with its keys and severities: startup missing or
// repeated, the game renamed, forces while one is pending or naming
// unknown actions, late (500 ms) or timed-out (5 s) results (those still
// missing after 5 s count as timed out), register conflicts and
// duplicates, and schema problems ([neuro.LintAction]).
func (s *Server) Findings() []neuro.Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checker.finish(time.Now())
	return s.checker.findings()
}
