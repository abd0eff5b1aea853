package xiaotangyuan

import (
	"strings"
	"time"
)

// Limits of an [Assembler]'s memory. Both are bounded so that a Harness
// that never sends done cannot grow the client without limit.
const (
	maxActive  = 64  // interactions streaming at once; the oldest is forgotten beyond it
	maxRetired = 256 // remembered finished or cancelled interactions
)

// Assembler turns the stream notifications of one connection into display
// events, keyed by interactionId. It is a passive value: no goroutines, no
// locks, no clock. The zero value is ready to use; it is not safe for
// concurrent use.
//
// The rules (docs/xiaotangyuan-protocol.md, "Streaming"):
//   - each delta's cumulative text replaces the displayed text; deltas are
//     never concatenated;
//   - a text that does not extend the previous one is a model step reset
//     and is reported with Event.StepReset;
//   - a delta repeating the current text (a legacy assistant.delta sent
//     beside assistant.text.delta) is dropped;
//   - done carries the final text and retires the interaction;
//   - cancel retires every interaction streaming at that moment, and later
//     start, delta or done events for them are dropped (the Harness re-sends
//     start after a barge-in);
//   - done without start (proactive replies) is reported as is.
type Assembler struct {
	seq     uint64
	active  map[string]*interaction
	retired map[string]bool // true when cancelled, false when done
	order   []string        // retired ids, oldest first; ring of maxRetired
	next    int
}

type interaction struct {
	text    string
	started bool
	seq     uint64
}

// Start handles assistant.text.start. ok is false when the event is dropped.
func (a *Assembler) Start(id string, src Source) (ev Event, ok bool) {
	if a.isRetired(id) {
		return ev, false
	}
	s := a.get(id)
	if s.started {
		return ev, false
	}
	s.started = true
	return Event{Kind: EventStart, InteractionID: id, Source: src}, true
}

// Delta handles assistant.text.delta (and the legacy assistant.delta).
// text is the cumulative text of the current model step. ok is false when
// the event is dropped.
func (a *Assembler) Delta(id string, src Source, delta, text string, elapsed time.Duration) (ev Event, ok bool) {
	if a.isRetired(id) {
		return ev, false
	}
	s := a.get(id)
	if text == s.text {
		return ev, false
	}
	reset := !strings.HasPrefix(text, s.text)
	s.text = text
	return Event{Kind: EventText, InteractionID: id, Source: src, Text: text, Delta: delta, StepReset: reset, Elapsed: elapsed}, true
}

// Done handles assistant.text.done: text is authoritative and the
// interaction is retired. ok is false when the interaction was already
// done or cancelled.
func (a *Assembler) Done(id string, src Source, text string) (ev Event, ok bool) {
	if a.isRetired(id) {
		return ev, false
	}
	delete(a.active, id)
	a.retire(id, false)
	return Event{Kind: EventDone, InteractionID: id, Source: src, Text: text}, true
}

// Cancel handles assistant.text.cancel, which names no interaction: every
// interaction streaming now is cancelled. It always returns an event, as
// the Harness also sends cancel when nothing streams.
func (a *Assembler) Cancel(reason string) Event {
	for id := range a.active {
		a.retire(id, true)
	}
	clear(a.active)
	return Event{Kind: EventCancel, Reason: reason}
}

// Cancelled reports whether id was cancelled (and is still remembered).
func (a *Assembler) Cancelled(id string) bool {
	return a.retired[id]
}

// Reset forgets everything, for a new connection.
func (a *Assembler) Reset() {
	*a = Assembler{}
}

func (a *Assembler) isRetired(id string) bool {
	_, ok := a.retired[id]
	return ok
}

// get returns the interaction for id, creating it (and forgetting the
// oldest one beyond maxActive).
func (a *Assembler) get(id string) *interaction {
	if s, ok := a.active[id]; ok {
		return s
	}
	if a.active == nil {
		a.active = make(map[string]*interaction)
	}
	if len(a.active) >= maxActive {
		oldest, min := "", ^uint64(0)
		for k, s := range a.active {
			if s.seq < min {
				oldest, min = k, s.seq
			}
		}
		delete(a.active, oldest)
	}
	a.seq++
	s := &interaction{seq: a.seq}
	a.active[id] = s
	return s
}

func (a *Assembler) retire(id string, cancelled bool) {
	if a.retired == nil {
		a.retired = make(map[string]bool)
		a.order = make([]string, maxRetired)
	}
	if old := a.order[a.next]; old != "" {
		delete(a.retired, old)
	}
	a.order[a.next] = id
	a.next = (a.next + 1) % maxRetired
	a.retired[id] = cancelled
}
