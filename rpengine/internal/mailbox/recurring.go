package mailbox

import (
	"context"
	"log/slog"
	"time"
)

// recurring is a condition that can last across many polls (an inbox
// that cannot be listed, an outbox that cannot be written, a lock whose
// heartbeat fails). It is logged once when it starts and once when it
// ends, with how many times it was met and for how long, instead of at
// every poll (issue #16: 4 to 15 lines a second while idle). Its owner
// serialises calls, and logs the lines they return with no lock held.
type recurring struct {
	what   string // what is wrong, e.g. "mailbox inbox cannot be read"
	count  int
	since  time.Time
	reason string // the latest
}

// logLine is a line to log, or nil for none.
type logLine struct {
	level slog.Level
	msg   string
	args  []any
}

// to logs the line, if any.
func (l *logLine) to(log *slog.Logger) {
	if l != nil {
		log.Log(context.Background(), l.level, l.msg, l.args...)
	}
}

// fail records one occurrence; the first returns a Warn line.
func (c *recurring) fail(reason string, args ...any) *logLine {
	var l *logLine
	if c.count == 0 {
		c.since = time.Now()
		l = &logLine{slog.LevelWarn, "rpengine: " + c.what + " (logged again when it ends)", append(args, "reason", reason)}
	}
	c.count++
	c.reason = reason
	return l
}

// ok ends the condition, if it was on, with an Info line.
func (c *recurring) ok(args ...any) *logLine {
	if c.count == 0 {
		return nil
	}
	l := &logLine{slog.LevelInfo, "rpengine: " + c.what + ": no longer", append(args, "times", c.count,
		"lasted", time.Since(c.since).Round(time.Millisecond), "lastReason", c.reason)}
	c.count = 0
	return l
}
