package xtytest

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Source says what produced a turn, as in the protocol's source field.
type Source string

// Turn sources. Compose turns stream nothing.
const (
	SourceChat    Source = "chat"
	SourceRetry   Source = "retry"
	SourceVoice   Source = "voice"
	sourceCompose Source = "compose"
)

// Agent is the scripted model behind the fake. It streams text with
// [Turn.Say], may change model step with [Turn.Step], call the game's
// atoms with [Turn.CallAtom] and barge in with [Turn.BargeIn], and returns
// the final reply, which becomes text.done and the RPC result. An error
// is answered as -32000 with its text; an empty reply as -32000 "model
// returned no text reply". It runs on the connection's worker, so the
// connection processes nothing else meanwhile (as the gateway).
type Agent func(ctx context.Context, t *Turn) (reply string, err error)

// Echo is the default agent: it streams "You said: " and the text as two
// chunks and replies with both.
func Echo(ctx context.Context, t *Turn) (string, error) {
	t.Say("You said: ")
	t.Say(t.Text)
	return "You said: " + t.Text, nil
}

// Turn is one agent run. Its methods must be called from the agent
// function only; CallAtom may also be called from several goroutines the
// agent starts (to call atoms in parallel), the others not concurrently.
type Turn struct {
	Text          string          // the player's text (trimmed), or the transcript
	Source        Source          // SourceChat, SourceRetry, SourceVoice, or compose
	Context       json.RawMessage // the request's context object, nil if none
	InteractionID string          // a fresh UUID

	hc    *hconn
	began time.Time
	acc   accumulator
	mute  bool // compose: no notifications
}

func (hc *hconn) newTurn(text string, src Source, cc *chatContext) *Turn {
	t := &Turn{Text: text, Source: src, InteractionID: newUUID(), hc: hc, began: time.Now(), mute: src == sourceCompose}
	if cc != nil {
		t.Context = cc.raw
	}
	t.acc.interval = hc.s.o.Coalesce
	return t
}

// Say streams one model chunk through the 80 ms coalescing: the first
// delta goes at once, later ones at most one per interval, or at once when
// the chunk ends a sentence (。！？!?\n).
func (t *Turn) Say(chunk string) {
	now := time.Now()
	t.emit(t.acc.push(chunk, now), now)
}

// Step starts a new model step (after a tool call): pending text is
// flushed and the cumulative text restarts from empty.
func (t *Turn) Step() {
	now := time.Now()
	t.emit(t.acc.flush(now), now)
	t.acc.step = ""
}

// CallAtom calls a game atom (game.atom.execute) and waits up to the
// Harness's atom timeout. The atom must have been declared in the hello.
// The adapter's error message comes back as the error's text.
func (t *Turn) CallAtom(ctx context.Context, atom string, args any) (json.RawMessage, error) {
	return t.hc.callAtom(ctx, atom, args)
}

// BargeIn sends text.cancel and status recording on this connection, as
// the player pressing push-to-talk mid-reply.
func (t *Turn) BargeIn() { t.hc.bargeIn() }

// finish flushes the pending text; the interaction then needs no
// "started" mark any more (done never sends start), so the set stays
// bounded by the turns running at once.
func (t *Turn) finish() {
	now := time.Now()
	t.emit(t.acc.flush(now), now)
	t.hc.mu.Lock()
	delete(t.hc.started, t.InteractionID)
	t.hc.mu.Unlock()
}

func (t *Turn) emit(d pendingDelta, now time.Time) {
	if !d.ok || t.mute {
		return
	}
	t.hc.emitDelta(t.InteractionID, t.Source, d.delta, d.text, now.Sub(t.began))
}

type pendingDelta struct {
	delta, text string
	ok          bool
}

// accumulator is the gateway's StreamingReplyAccumulator, with time passed
// in.
type accumulator struct {
	interval time.Duration
	step     string // cumulative text of the current step
	pending  string // text not yet emitted
	last     time.Time
	emitted  bool
}

func (a *accumulator) push(chunk string, now time.Time) pendingDelta {
	a.step += chunk
	a.pending += chunk
	if a.emitted && now.Sub(a.last) < a.interval && !endsSentence(chunk) {
		return pendingDelta{}
	}
	a.emitted, a.last = true, now
	return a.take()
}

func (a *accumulator) flush(now time.Time) pendingDelta {
	if a.pending == "" {
		return pendingDelta{}
	}
	a.emitted, a.last = true, now
	return a.take()
}

func (a *accumulator) take() pendingDelta {
	d := pendingDelta{delta: a.pending, text: a.step, ok: true}
	a.pending = ""
	return d
}

func endsSentence(s string) bool {
	for _, suf := range []string{"。", "！", "？", "!", "?", "\n"} {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}
