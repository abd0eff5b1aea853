package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// lineHandler prints the client's warnings (plain http to a remote host,
// an error after an answer that was kept) as one line each,
// "neurosan-chat: what: why", like the program's other messages; debug and
// info lines are dropped.
type lineHandler struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	msg := strings.TrimPrefix(r.Message, "neurosan: ")
	r.Attrs(func(a slog.Attr) bool {
		msg += ": " + a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "neurosan-chat: %s\n", msg)
	return err
}

func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lineHandler) WithGroup(string) slog.Handler      { return h }
