package rpengine

import (
	"log/slog"
	"time"
)

// recurring is a condition that can last across many polls (an inbox
// that cannot be listed, an outbox that cannot be written, a lock whose
// heartbeat fails). It is logged once when it starts and once when it
// ends, with how many times it was met and for how long, instead of at
// every poll (issue #16: 4 to 15 lines a second while idle). Its owner
// serialises calls.
type recurring struct {
	what   string // what is wrong, e.g. "mailbox inbox cannot be read"
	count  int
	since  time.Time
	reason string // the latest
}

// fail records one occurrence; the first is logged at Warn.
func (c *recurring) fail(log *slog.Logger, reason string, args ...any) {
	if c.count == 0 {
		c.since = time.Now()
		log.Warn("rpengine: "+c.what+" (logged again when it ends)", append(args, "reason", reason)...)
	}
	c.count++
	c.reason = reason
}

// ok ends the condition, if it was on, with one Info line.
func (c *recurring) ok(log *slog.Logger, args ...any) {
	if c.count == 0 {
		return
	}
	log.Info("rpengine: "+c.what+": no longer", append(args, "times", c.count,
		"lasted", time.Since(c.since).Round(time.Millisecond), "lastReason", c.reason)...)
	c.count = 0
}
