package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// lineHandler prints the client's warnings (a reconnect that failed, a
// heartbeat not sent) as one line each, "xiaotangyuan-chat: what: why",
// like the program's other messages; debug and info lines are dropped.
type lineHandler struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			msg += ": " + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "%s: %s\n", name, msg)
	return err
}

func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lineHandler) WithGroup(string) slog.Handler      { return h }
