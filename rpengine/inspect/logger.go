package inspect

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
)

// Logger returns a logger for [rpengine.ServerOptions.Logger] that
// passes every record to next (slog.Default() if nil), as next's handler
// would take it, and keeps a copy for the page: a record whose requestId
// names a kept reply is shown beside it, any other in the connection
// panel. It collects every level, so the server logs its debug lines
// (anomalies are logged at debug) even when next drops them; next still
// sees only what it enables.
func (in *Inspector) Logger(next *slog.Logger) *slog.Logger {
	if next == nil {
		next = slog.Default()
	}
	return slog.New(&logHandler{in: in, next: next.Handler()})
}

// logHandler is the slog.Handler of Logger. Its attrs are formatted text
// (key=value, groups dotted), copied from the record: the server may hand
// it strings over buffers it reuses.
type logHandler struct {
	in     *Inspector
	next   slog.Handler
	prefix string // attrs of WithAttrs, formatted
	group  string // dotted group of WithGroup, with a trailing dot
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	id := ""
	r.Attrs(func(a slog.Attr) bool {
		if h.group == "" && a.Key == "requestId" {
			id = a.Value.String() // only looked up, never kept
		}
		appendAttr(&b, h.group, a)
		return b.Len() < maxNoteBytes
	})
	h.in.logRecord(r.Time, r.Level.String(), b.String(), id)
	return err
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range as {
		appendAttr(&b, h.group, a)
	}
	return &logHandler{in: h.in, next: h.next.WithAttrs(as), prefix: clip(b.String()), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &logHandler{in: h.in, next: h.next.WithGroup(name), prefix: h.prefix, group: h.group + name + "."}
}

// appendAttr writes " key=value" (the value quoted when it has spaces).
func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, x := range a.Value.Group() {
			appendAttr(b, g, x)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(group)
	b.WriteString(a.Key)
	b.WriteByte('=')
	v := a.Value.String()
	if strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}
