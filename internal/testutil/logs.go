package testutil

import (
	"context"
	"log/slog"
	"sync"
)

// Logs is a slog.Handler that keeps every record, at every level, for
// tests that assert on what a client logged. All methods may be called
// concurrently. The zero value is ready to use.
type Logs struct {
	mu   sync.Mutex // guards following
	recs []slog.Record
}

// Logger returns a logger writing to l.
func (l *Logs) Logger() *slog.Logger { return slog.New(l) }

// Enabled reports true for every level.
func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps a copy of r.
func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

// WithAttrs returns l: attributes added to the logger are not kept.
func (l *Logs) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup returns l.
func (l *Logs) WithGroup(string) slog.Handler { return l }

// Records returns the records kept so far, at level and above, oldest
// first.
func (l *Logs) Records(level slog.Level) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if r.Level >= level {
			out = append(out, r)
		}
	}
	return out
}

// Attr returns the value of r's attribute key, or nil if r has none.
func Attr(r slog.Record, key string) any {
	var v any
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Any()
			return false
		}
		return true
	})
	return v
}
