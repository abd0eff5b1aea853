// Package repeat is the slog.Handler the game's server logs through: a
// line that repeats is a condition, logged when it starts and when it
// ends with a count, instead of at every occurrence.
package repeat

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Repeated log lines. A peer can make the server log at will (400 refused
// upgrades wrote 24 MB of log in half a second, issue #16). Each value a
// peer controls is bounded (internal/peertext); on top of that, a line
// that repeats is a condition, logged when it starts and when it ends
// with a count:
//
//   - the first repeatBurst lines with one message are logged as they come;
//   - the next one is replaced by a line saying that further ones are
//     counted, not logged;
//   - once that message has not been seen for repeatQuiet, a line says how
//     many were not logged and over how long, and the next one starts
//     afresh.
//
// Conditions are told apart by message alone: the library's messages are
// constants and everything variable is in attributes.
const (
	repeatBurst = 50
	repeatQuiet = 10 * time.Second
	// repeatKeys bounds the messages tracked at once; lines with any
	// other message then share one count.
	repeatKeys = 64
)

// Handler is the slog.Handler the server logs through: it passes
// records to the game's handler under the rules above. Close ends every
// condition.
type Handler struct {
	h  slog.Handler
	st *repeatState
}

// repeatState is shared by a handler and every handler derived from it
// with WithAttrs and WithGroup.
type repeatState struct {
	mu     sync.Mutex // guards following
	byMsg  map[string]*repeat
	closed bool
}

// repeat is one condition: a message seen again within repeatQuiet.
type repeat struct {
	msg        string
	h          slog.Handler // of the first line not logged (its attributes)
	level      slog.Level
	count      int // lines in this condition
	suppressed int // lines not logged
	first      time.Time
	last       time.Time
	timer      *time.Timer // armed while lines are suppressed
}

// NewHandler returns a Handler passing records to h.
func NewHandler(h slog.Handler) *Handler {
	return &Handler{h: h, st: &repeatState{byMsg: make(map[string]*repeat)}}
}

// Enabled is the game's handler's.
func (r *Handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

// WithAttrs derives a handler that shares the counts.
func (r *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{h: r.h.WithAttrs(as), st: r.st}
}

// WithGroup derives a handler that shares the counts.
func (r *Handler) WithGroup(name string) slog.Handler {
	return &Handler{h: r.h.WithGroup(name), st: r.st}
}

// Handle logs rec, or counts it when its message is repeating.
func (r *Handler) Handle(ctx context.Context, rec slog.Record) error {
	now := rec.Time
	if now.IsZero() {
		now = time.Now()
	}
	verdict, ended := r.st.note(rec.Message, rec.Level, r.h, now)
	if ended != nil {
		ended.end()
	}
	switch verdict {
	case repeatLog:
		return r.h.Handle(ctx, rec)
	case repeatStart:
		s := slog.NewRecord(now, rec.Level, "rpengine: log line repeating; counting instead of logging until it stops", 0)
		s.AddAttrs(slog.String("line", rec.Message), slog.Int("logged", repeatBurst))
		return r.h.Handle(ctx, s)
	}
	return nil
}

type repeatVerdict int

const (
	repeatLog   repeatVerdict = iota // log the line
	repeatStart                      // log that the lines are now counted
	repeatCount                      // count it
)

// note records one line with msg and says what to do with it; ended,
// when not nil, is a condition with that message that ended before this
// line (its timer had not fired yet), to be logged first.
func (st *repeatState) note(msg string, level slog.Level, h slog.Handler, now time.Time) (_ repeatVerdict, ended *repeat) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return repeatLog, nil
	}
	if _, ok := st.byMsg[msg]; !ok && len(st.byMsg) >= repeatKeys {
		msg = "" // one shared count for the rest
	}
	rp := st.byMsg[msg]
	if rp != nil && now.Sub(rp.last) >= repeatQuiet {
		if rp.suppressed > 0 {
			rp.timer.Stop()
			ended = rp
		}
		rp = nil
	}
	if rp == nil {
		rp = &repeat{msg: msg, first: now}
		st.byMsg[msg] = rp
	}
	rp.count++
	rp.last = now
	switch {
	case rp.count <= repeatBurst:
		return repeatLog, ended
	case rp.suppressed == 0:
		rp.h, rp.level, rp.suppressed = h, level, 1
		rp.timer = time.AfterFunc(repeatQuiet, func() { st.expire(rp) })
		return repeatStart, ended
	}
	rp.suppressed++
	return repeatCount, ended
}

// expire ends rp if it has been quiet for repeatQuiet, or waits again.
func (st *repeatState) expire(rp *repeat) {
	st.mu.Lock()
	if st.closed || st.byMsg[rp.msg] != rp {
		st.mu.Unlock()
		return
	}
	if wait := repeatQuiet - time.Since(rp.last); wait > 0 {
		rp.timer.Reset(wait)
		st.mu.Unlock()
		return
	}
	delete(st.byMsg, rp.msg)
	st.mu.Unlock()
	rp.end()
}

// Close ends every condition (logging the counts) and stops counting: the
// server is shutting down.
func (r *Handler) Close() { r.st.close() }

// close is Close for every handler sharing st.
func (st *repeatState) close() {
	st.mu.Lock()
	st.closed = true
	var ended []*repeat
	for _, rp := range st.byMsg {
		if rp.suppressed > 0 {
			rp.timer.Stop()
			ended = append(ended, rp)
		}
	}
	st.byMsg = nil
	st.mu.Unlock()
	for _, rp := range ended {
		rp.end()
	}
}

// end logs that the condition ended, with its counts; rp is no longer
// shared.
func (rp *repeat) end() {
	rec := slog.NewRecord(time.Now(), rp.level, "rpengine: log line stopped repeating", 0)
	line := rp.msg
	if line == "" {
		line = "(several)"
	}
	rec.AddAttrs(slog.String("line", line), slog.Int("count", rp.count), slog.Int("notLogged", rp.suppressed),
		slog.Duration("over", rp.last.Sub(rp.first)))
	_ = rp.h.Handle(context.Background(), rec)
}
