package neurosantest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/neurosan"
)

// RealLineDelay is the pause the real server makes after every flushed line.
const RealLineDelay = 300 * time.Millisecond

// Options configures a fake [Server]. A nil *Options means defaults.
type Options struct {
	// Agents are the agent networks served. Names may contain '/'.
	Agents []Agent
	// LineDelay is the pause after every flushed stream line. If zero,
	// RealLineDelay (0.3 s, like the real server); negative means none.
	LineDelay time.Duration
	// TwoPerLine puts two responses on one line (no newline between them),
	// which the API documents as possible.
	TwoPerLine bool
	// SplitWrites, if positive, writes each line in pieces of this many
	// bytes, flushing after each, so one object arrives in several reads.
	SplitWrites int
	// Heartbeat, if positive, writes an empty AGENT_PROGRESS frame whenever
	// the script has been silent that long.
	Heartbeat time.Duration
	// Unavailable answers the first Unavailable requests (any route) with
	// 503 {"error":"Too many concurrent requests"}.
	Unavailable int
	// ConcurrencyLimit, if positive, answers 503 "Too many concurrent
	// requests" to a streaming_chat beyond that many in flight.
	ConcurrencyLimit int
	// ShuttingDown answers every request with 503 "Server is shutting down".
	ShuttingDown bool
}

// Agent is one scripted agent network.
type Agent struct {
	// Name may contain '/' (nested registries).
	Name        string
	Description string
	Tags        []string
	// Hidden agents are served but not listed.
	Hidden bool
	// Forbidden agents answer 403 on every route, as a refusing authorizer.
	Forbidden bool
	// Parameters, SlyDataSchema and SlyDataOutputSchema are returned by the
	// function route as they are.
	Parameters, SlyDataSchema, SlyDataOutputSchema json.RawMessage
	// Connectivity is returned by the connectivity route.
	Connectivity []neurosan.Node
	// FrontMan is the tool name of the front-man (the answer's origin). If
	// empty, the last segment of Name.
	FrontMan string
	// MaxMessageHistory trims the returned chat history to that many
	// messages. If zero, it is not trimmed.
	MaxMessageHistory int
	// AllowSlyData is the front-man's allow.to_upstream.sly_data: only these
	// keys of a Reply's SlyData are returned (deny by default).
	AllowSlyData []string
	// ContextPadding adds a field of that many bytes to the chat_context, to
	// make lines far longer than bufio.Scanner's 64 KiB.
	ContextPadding int
	// Script answers a turn. If nil, it answers "You said: <text>".
	Script func(ctx context.Context, t *Turn) Reply
}

// Turn is what a script sees of one request.
type Turn struct {
	Agent string
	Text  string
	// History is the front-man's chat history from the request's
	// chat_context (HUMAN and AI messages), oldest first.
	History []neurosan.ChatMessage
	// SlyData is the request's sly_data.
	SlyData map[string]json.RawMessage

	steps chan<- neurosan.ChatMessage
	front string
}

// Emit streams an intermediate message now (shown only with MAXIMAL). An
// empty Origin becomes the front-man's. It returns ctx's error when the
// client went away: the script should then return.
func (t *Turn) Emit(ctx context.Context, m neurosan.ChatMessage) error {
	if len(m.Origin) == 0 {
		m.Origin = []neurosan.Origin{{Tool: t.front}}
	}
	select {
	case t.steps <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fault is a failure a script can make the server report inside a 200
// stream.
type Fault int

// The faults.
const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// FaultTimeout appends {"error":"Request timeout"} without a newline,
	// as the network's request timeout does.
	FaultTimeout
	// FaultInternal appends {"error":"Internal server error"} without a
	// newline, as any exception does.
	FaultInternal
)

// String returns the constant's name, for test logs and flag values.
func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "FaultNone"
	case FaultTimeout:
		return "FaultTimeout"
	case FaultInternal:
		return "FaultInternal"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// Reply is a script's answer to a turn.
type Reply struct {
	Text      string
	Structure json.RawMessage
	// SlyData is filtered by the agent's AllowSlyData.
	SlyData map[string]json.RawMessage
	// Fault, if set, replaces the answer with an error object.
	Fault Fault
}

// TurnRecord is what the server observed of one streaming_chat request.
type TurnRecord struct {
	Agent       string
	Text        string
	Filter      string          // chat_filter_type as sent, "" if absent
	ChatContext json.RawMessage // as received
	SlyData     map[string]json.RawMessage
	Header      http.Header
	// Cancelled: the client went away before the turn ended; the script's
	// context was cancelled and the script has returned.
	Cancelled bool
	// Done: the handler has returned.
	Done bool
}

// Server is a fake NeuroSan server. It is an http.Handler; NewServer also
// starts it on a loopback port. All methods may be called concurrently.
type Server struct {
	// URL is the base URL after Start ("http://127.0.0.1:port").
	URL string

	opts   Options
	agents map[string]*Agent
	ts     *httptest.Server

	mu       sync.Mutex // guards following
	requests int
	active   int
	turns    []*TurnRecord
	changed  chan struct{} // closed and replaced on every turn state change
}

// New returns an unstarted fake, to serve with Start or as an http.Handler.
func New(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Agents = slices.Clone(o.Agents) // the caller may reuse its slice
	s := &Server{opts: o, agents: map[string]*Agent{}, changed: make(chan struct{})}
	for i := range o.Agents {
		a := &o.Agents[i]
		s.agents[a.Name] = a
	}
	return s
}

// NewServer returns a started fake listening on a loopback port.
func NewServer(opts *Options) *Server {
	s := New(opts)
	s.Start()
	return s
}

// Start listens on a loopback port and sets URL.
func (s *Server) Start() {
	s.ts = httptest.NewServer(s)
	s.URL = s.ts.URL
}

// Close stops a started server, cutting open streams, and waits for every
// handler and script to return.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.CloseClientConnections()
		s.ts.Close()
	}
}

// Requests returns how many requests arrived, on any route.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Turns returns a copy of the streaming_chat records, in arrival order.
func (s *Server) Turns() []TurnRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TurnRecord, len(s.turns))
	for i, t := range s.turns {
		out[i] = *t
	}
	return out
}

// WaitIdle waits until no streaming_chat handler is running, so a test can
// check that a turn the client abandoned was cancelled.
func (s *Server) WaitIdle(ctx context.Context) error {
	for {
		s.mu.Lock()
		n, ch := s.active, s.changed
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP routes a request like the real server: /api/v1/list,
// /api/v1/{agent}/{function,connectivity,streaming_chat} where {agent} is
// (.+), and the health routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	unavailable := s.requests <= s.opts.Unavailable
	s.mu.Unlock()
	switch {
	case s.opts.ShuttingDown:
		writeError(w, http.StatusServiceUnavailable, "Server is shutting down")
		return
	case unavailable:
		writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests")
		return
	}
	p := r.URL.Path
	switch p {
	case "/", "/healthz", "/readyz", "/livez":
		writeJSON(w, map[string]string{"status": "ok"})
		return
	case "/api/v1/list":
		s.list(w, r)
		return
	}
	rest, ok := strings.CutPrefix(p, "/api/v1/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		http.NotFound(w, r)
		return
	}
	name, op := rest[:i], rest[i+1:]
	a := s.agents[name]
	if a == nil {
		w.WriteHeader(http.StatusNotFound) // the real server's 404 has an empty body
		return
	}
	if a.Forbidden {
		writeError(w, http.StatusForbidden, "Not authorized")
		return
	}
	switch {
	case op == "function" && r.Method == http.MethodGet:
		s.function(w, a)
	case op == "connectivity" && r.Method == http.MethodGet:
		writeJSON(w, neurosan.Connectivity{Nodes: a.Connectivity})
	case op == "streaming_chat" && r.Method == http.MethodPost:
		s.streamingChat(w, r, a)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	type info = neurosan.AgentInfo
	out := struct {
		Agents []info `json:"agents"`
	}{Agents: []info{}}
	for i := range s.opts.Agents {
		if a := &s.opts.Agents[i]; !a.Hidden && !a.Forbidden {
			out.Agents = append(out.Agents, info{AgentName: a.Name, Description: a.Description, Tags: a.Tags})
		}
	}
	writeJSON(w, out)
}

func (s *Server) function(w http.ResponseWriter, a *Agent) {
	writeJSON(w, map[string]neurosan.Function{"function": {
		Description: a.Description, Parameters: a.Parameters,
		SlyDataSchema: a.SlyDataSchema, SlyDataOutputSchema: a.SlyDataOutputSchema,
	}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Write(b)
}

// frontMan returns the agent's front-man tool name.
func (a *Agent) frontMan() string {
	if a.FrontMan != "" {
		return a.FrontMan
	}
	return a.Name[strings.LastIndexByte(a.Name, '/')+1:]
}

// lineWriter writes stream lines with the configured framing traps.
type lineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	ctx     context.Context
	opts    *Options
	pending []byte // TwoPerLine: a response waiting for its line-mate
}

func (lw *lineWriter) response(b []byte) error {
	if lw.opts.TwoPerLine {
		if lw.pending == nil {
			lw.pending = b
			return nil
		}
		b = append(lw.pending, b...)
		lw.pending = nil
	}
	return lw.line(append(b, '\n'))
}

// flushPending ends a half-filled TwoPerLine line.
func (lw *lineWriter) flushPending() error {
	if lw.pending == nil {
		return nil
	}
	b := append(lw.pending, '\n')
	lw.pending = nil
	return lw.line(b)
}

func (lw *lineWriter) line(b []byte) error {
	if err := lw.write(b); err != nil {
		return err
	}
	d := lw.opts.LineDelay
	if d == 0 {
		d = RealLineDelay
	}
	if d < 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-lw.ctx.Done():
		return lw.ctx.Err()
	}
}

func (lw *lineWriter) write(b []byte) error {
	n := lw.opts.SplitWrites
	if n <= 0 {
		n = len(b)
	}
	for len(b) > 0 {
		k := min(n, len(b))
		if _, err := lw.w.Write(b[:k]); err != nil {
			return err
		}
		if err := lw.rc.Flush(); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

func readBody(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(io.LimitReader(r, 64<<20))
	return buf.Bytes(), err
}
