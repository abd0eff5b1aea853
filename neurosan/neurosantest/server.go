package neurosantest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/fakehost"
	"github.com/gamelink-go/gamelink/neurosan"

	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// LegacyLineDelay is the pause that NeuroSan servers made after every
// flushed stream line until May 2026, to make the transport send each line
// in a chunk of its own. Servers since then flush and go on (read from the
// server's source), so several lines may arrive in one read; set
// [Options].LineDelay to LegacyLineDelay to model an older server.
const LegacyLineDelay = 300 * time.Millisecond

// Options configures a fake [Server]. A nil *Options means defaults.
type Options struct {
	// Agents are the agent networks served. Names may contain '/'.
	Agents []Agent
	// LineDelay is the pause after every flushed stream line. If zero or
	// negative, none: current servers flush each line and go on.
	// LegacyLineDelay (0.3 s) is what servers before May 2026 paused.
	LineDelay time.Duration
	// TwoPerLine puts two responses on one line (no newline between them),
	// which the API documents as possible.
	TwoPerLine bool
	// SplitWrites, if positive, writes each line in pieces of this many
	// bytes, flushing after each, so one object arrives in several reads.
	SplitWrites int
	// Heartbeat, if positive, writes an empty AGENT_PROGRESS frame whenever
	// nothing was written to a stream for that long, as the server does with
	// AGENT_STREAM_KEEP_ALIVE_WITH_PROGRESS_INTERVAL_SECONDS set. If zero,
	// none: the server's default.
	Heartbeat time.Duration
	// Unavailable answers the first Unavailable requests to the API routes
	// with 503 {"error": "Too many concurrent requests"}.
	Unavailable int
	// ConcurrencyLimit, if positive, answers 503 "Too many concurrent
	// requests" to a streaming_chat or tool call beyond that many in flight
	// (the server's concurrent_requests_limit). A turn holds its slot until
	// its handler ends, however long after the client left.
	ConcurrencyLimit int
	// ShuttingDown answers every API request with 503 "Server is shutting
	// down". The health probes still answer.
	ShuttingDown bool
	// NotReady makes the readiness probes (/readyz, /healthz and /)
	// answer 503 {"error": "Service Unavailable"}; /livez still answers.
	NotReady bool
	// Addr, if set, is a loopback "host:port" (port 0 picks a free one)
	// that Start also listens on, for programs that cannot use
	// [Server.Client]; URL is then its http:// address. If empty, the
	// server opens no port.
	Addr string
}

// Agent is one scripted agent network.
type Agent struct {
	// Name may contain '/' (nested registries).
	Name        string
	Description string
	Tags        []string
	// Hidden agents are served but not listed.
	Hidden bool
	// Forbidden agents answer 403 with an empty body on every chat route,
	// as a refusing authorizer makes the server do.
	Forbidden bool
	// Parameters, SlyDataSchema and SlyDataOutputSchema are returned by the
	// function route as they are.
	Parameters, SlyDataSchema, SlyDataOutputSchema json.RawMessage
	// Connectivity is returned by the connectivity route.
	Connectivity []neurosan.Node
	// FrontMan is the tool name of the front-man (the origin of the
	// intermediate messages and of the chat history). If empty, the last
	// segment of Name.
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
	// Tools are the coded tools that POST /api/v1/{agent}/tool/{tool} calls
	// directly. A network with none is not distributable: the route
	// answers 404, as the server does.
	Tools map[string]Tool
}

// Turn is what a script sees of one request.
type Turn struct {
	Agent string
	Text  string
	// History is the front-man's chat history from the request's
	// chat_context (HUMAN and AI messages), oldest first.
	History []neurosan.ChatMessage
	// SlyData is the request's sly_data, each value as the client sent it
	// (NaN and Infinity included).
	SlyData map[string]json.RawMessage

	steps chan<- neurosan.ChatMessage
	front string
}

// Emit streams an intermediate message now: written with MAXIMAL, and with
// MINIMAL too when it is an AGENT_FRAMEWORK message with a chat_context,
// whatever its origin, as the server's MINIMAL filter passes it (a
// sub-network's relayed answer, origin of length 3, included; see
// docs/neurosan-protocol.md). An empty Origin becomes the front-man's,
// [{front-man, 1}]. It returns ctx's error when the turn was cancelled: the
// script should then return.
func (t *Turn) Emit(ctx context.Context, m neurosan.ChatMessage) error {
	if len(m.Origin) == 0 {
		m.Origin = []neurosan.Origin{{Tool: t.front, InstantiationIndex: 1}}
	}
	select {
	case t.steps <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fault is a failure a script can make the server report.
type Fault int

// The faults.
const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// FaultTimeout writes {"error": "Request timeout"} without a newline,
	// as the network's request_timeout_seconds does.
	FaultTimeout
	// FaultInternal writes {"error": "Internal server error"} without a
	// newline, as any exception does.
	FaultInternal
	// FaultCut closes the connection without ending the chunked body, as a
	// crashed server or a proxy does. It needs a real connection (NewServer
	// or Start); through ServeHTTP alone it just ends the body.
	FaultCut
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
	case FaultCut:
		return "FaultCut"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// Reply is a script's answer to a turn.
type Reply struct {
	Text string
	// Structure, like SlyData's values, is JSON as Python reads it: NaN,
	// Infinity and -Infinity are allowed and written as the server writes
	// them.
	Structure json.RawMessage
	// SlyData is filtered by the agent's AllowSlyData.
	SlyData map[string]json.RawMessage
	// EmptyContext sends the answer with an empty chat_context ({}), as
	// servers since April 2026 do for "Event acknowledged" and for the
	// error text of a network that could not start (a missing LLM key).
	EmptyContext bool
	// Fault, if set, replaces the answer.
	Fault Fault
	// After, if set, follows the complete answer: the error object of
	// FaultTimeout or FaultInternal, or FaultCut. The server does this when
	// its request timeout or an exception strikes during the clean-up that
	// follows the last message.
	After Fault
}

// TurnRecord is what the server observed of one streaming_chat request.
type TurnRecord struct {
	Agent       string
	Text        string
	Filter      string          // chat_filter_type as sent, "" if absent
	ChatContext json.RawMessage // as received
	SlyData     map[string]json.RawMessage
	Header      http.Header
	// Cancelled: the client went away before the turn ended. Like the real
	// server, the fake notices only when it next writes to the stream (a
	// MAXIMAL message, a heartbeat, the answer); it then cancels the
	// script. With MINIMAL and no heartbeat that is when the script ends.
	Cancelled bool
	// Done: the handler has returned and the turn's concurrency slot is
	// free again.
	Done bool
}

// memoryURL is the Server's URL when it serves only in memory: the
// address of a local NeuroSan server, reached only through
// [Server.Client].
const memoryURL = "http://127.0.0.1:8080"

// Server is a fake NeuroSan server, in the shape of
// net/http/httptest.Server: [NewServer] returns it started,
// [NewUnstartedServer] lets a test start it later (a game launched before
// its server), [Server.Client] connects to it in memory (inside a
// testing/synctest bubble too), and [Server.Close] stops it. Set
// [Options].Addr for a loopback port. It is also an http.Handler. All
// methods may be called concurrently.
type Server struct {
	// URL is the base URL to give neurosan.New: "http://127.0.0.1:8080",
	// reached only through Client (no port is opened), or the http://
	// address of Options.Addr once started.
	URL string

	opts   Options
	agents map[string]*Agent
	host   *fakehost.Host
	ctx    context.Context // cancelled by Close: ends every turn
	stop   context.CancelFunc
	wg     sync.WaitGroup // Serve goroutines and handlers

	mu       sync.Mutex // guards following
	started  bool
	closed   bool
	requests int
	api      int // requests to the API routes, for Options.Unavailable
	active   int
	turns    []*TurnRecord
	changed  chan struct{} // closed and replaced on every turn state change
}

// NewServer returns a started fake.
func NewServer(opts *Options) *Server {
	s := NewUnstartedServer(opts)
	s.Start()
	return s
}

// NewUnstartedServer returns a fake that refuses connections until
// [Server.Start]; it may also serve as an http.Handler.
func NewUnstartedServer(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Agents = slices.Clone(o.Agents) // the caller may reuse its slice
	s := &Server{URL: memoryURL, opts: o, agents: map[string]*Agent{}, changed: make(chan struct{})}
	s.host = fakehost.New("neurosantest", memoryURL, http.HandlerFunc(s.serveTracked), &s.wg)
	s.ctx, s.stop = context.WithCancel(context.Background())
	for i := range o.Agents {
		a := &o.Agents[i]
		s.agents[a.Name] = a
	}
	return s
}

// Start begins serving: in memory, and on Options.Addr when set. It
// panics if the server was started or closed already, or cannot listen
// on Addr, as httptest does.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		panic("neurosantest: Start of a server already started or closed")
	}
	s.started = true
	s.URL = s.host.Start(s.opts.Addr)
	s.host.Pipe.Refuse(false)
}

// serveTracked is ServeHTTP counted in s.wg, so that Close waits for it.
func (s *Server) serveTracked(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "Server is shutting down")
		return
	}
	s.wg.Add(1) // under s.mu and before closed: Close's Wait sees it
	s.mu.Unlock()
	defer s.wg.Done()
	s.ServeHTTP(w, r)
}

// Client returns an http.Client whose connections are in-memory pipes to
// this server, whatever the URL; pass it as neurosan.Options.HTTPClient.
// It works inside a testing/synctest bubble when the server was created
// there.
func (s *Server) Client() *http.Client { return s.host.Client() }

// Close stops the server as a shutdown would: it cuts open streams,
// cancels every running script, and waits for every handler and script to
// return. It is idempotent, and may be called on an unstarted server to
// end the turns it served as an http.Handler.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.host.Pipe.Refuse(true)
	s.host.Close() // cuts every connection, streams included
	s.stop()       // a stream still open is cut, never ended cleanly
	s.wg.Wait()
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

// WaitIdle waits until no streaming_chat or tool handler is running, so a
// test can check what happened to a turn the client abandoned.
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

// acquire takes a concurrency slot, or refuses beyond ConcurrencyLimit.
func (s *Server) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.ConcurrencyLimit > 0 && s.active >= s.opts.ConcurrencyLimit {
		return false
	}
	s.active++
	s.notifyLocked()
	return true
}

func (s *Server) release(rec *TurnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if rec != nil {
		rec.Done = true
	}
	s.notifyLocked()
}

func (s *Server) record(rec *TurnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, rec)
	s.notifyLocked()
}

func (s *Server) cancelled(rec *TurnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Cancelled = true
}

// ServeHTTP routes a request as the real server does: the health probes
// /, /healthz, /readyz and /livez; /api/v1/list; and
// /api/v1/{agent}/{function,connectivity,streaming_chat} and
// /api/v1/{agent}/tool/{tool}, where {agent} is (.+). A path no route
// matches gets Tornado's 404 page, a route's wrong method its 405 page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	p := r.URL.Path
	switch p {
	case "/", "/healthz", "/" + wire.ProbeReady, "/" + wire.ProbeLive:
		if method(w, r, http.MethodGet) {
			s.health(w, p == "/"+wire.ProbeLive)
		}
		return
	}
	rest, ok := strings.CutPrefix(p, wire.APIPrefix)
	if !ok {
		writePage(w, http.StatusNotFound)
		return
	}
	var name, op, tool string
	toolPath := "/" + wire.RouteTool + "/"
	if i := strings.LastIndex(rest, toolPath); i > 0 && i+len(toolPath) < len(rest) {
		name, op, tool = rest[:i], wire.RouteTool, rest[i+len(toolPath):]
	} else if i := strings.LastIndexByte(rest, '/'); i > 0 {
		name, op = rest[:i], rest[i+1:]
	} else if rest == wire.RouteList {
		op = wire.RouteList
	}
	want := map[string]string{wire.RouteList: http.MethodGet, wire.RouteFunction: http.MethodGet, wire.RouteConnect: http.MethodGet,
		wire.RouteChat: http.MethodPost, wire.RouteTool: http.MethodPost}[op]
	if want == "" {
		writePage(w, http.StatusNotFound)
		return
	}
	if !method(w, r, want) || !s.serving(w) {
		return
	}
	if op == wire.RouteTool {
		s.tool(w, r, name, tool)
		return
	}
	if op == wire.RouteList {
		s.list(w)
		return
	}
	a := s.agents[name]
	switch {
	case a == nil:
		writeEmpty(w, http.StatusNotFound) // the real 404 has an empty body
	case a.Forbidden:
		writeEmpty(w, http.StatusForbidden) // and so has the 403
	case op == wire.RouteFunction:
		s.function(w, a)
	case op == wire.RouteConnect:
		s.connectivity(w, a)
	default:
		s.streamingChat(w, r, a)
	}
}

// serving answers 503 for a server that is shutting down or, for the first
// Options.Unavailable API requests, too busy. The server checks shutdown
// before anything else, and the concurrency limit after the agent lookup;
// the fake's Unavailable comes first, on any API route.
func (s *Server) serving(w http.ResponseWriter) bool {
	s.mu.Lock()
	s.api++
	busy := s.api <= s.opts.Unavailable
	s.mu.Unlock()
	switch {
	case s.opts.ShuttingDown:
		writeError(w, http.StatusServiceUnavailable, "Server is shutting down")
	case busy:
		writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests")
	default:
		return true
	}
	return false
}

// method answers Tornado's 405 page when r's method is not want.
func method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want {
		return true
	}
	writePage(w, http.StatusMethodNotAllowed)
	return false
}

// health answers a probe: the server's name, "ok" and the versions of its
// libraries (the fake reports "unknown", as the server does for a library
// it cannot find), or 503 when NotReady.
func (s *Server) health(w http.ResponseWriter, live bool) {
	if s.opts.NotReady && !live {
		writeError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	writeDict(w, http.StatusOK, []byte(`{"service":"neuro-san.Agent","status":"ok","versions":{"neuro-san":"unknown"}}`))
}

func (s *Server) list(w http.ResponseWriter) {
	var o wire.Object
	var agents [][]byte
	for i := range s.opts.Agents {
		if a := &s.opts.Agents[i]; !a.Hidden && !a.Forbidden {
			var info wire.Object
			info.Value("agent_name", a.Name)
			if a.Description != "" {
				info.Value("description", a.Description)
			}
			if len(a.Tags) > 0 {
				info.Value("tags", a.Tags)
			}
			agents = append(agents, done(&info))
		}
	}
	o.List("agents", agents)
	writeDict(w, http.StatusOK, done(&o))
}

func (s *Server) function(w http.ResponseWriter, a *Agent) {
	var f wire.Object
	if a.Description != "" {
		f.Value("description", a.Description)
	}
	f.Raw("parameters", a.Parameters)
	f.Raw("sly_data_schema", a.SlyDataSchema)
	f.Raw("sly_data_output_schema", a.SlyDataOutputSchema)
	var o wire.Object
	o.Raw("function", done(&f))
	writeDict(w, http.StatusOK, done(&o))
}

func (s *Server) connectivity(w http.ResponseWriter, a *Agent) {
	var nodes [][]byte
	for _, n := range a.Connectivity {
		var o wire.Object
		o.Value("origin", n.Origin)
		if len(n.Tools) > 0 {
			o.Value("tools", n.Tools)
		}
		if n.DisplayAs != "" {
			o.Value("display_as", n.DisplayAs)
		}
		o.Raw("metadata", n.Metadata)
		nodes = append(nodes, done(&o))
	}
	var o wire.Object
	o.List("connectivity_info", nodes)
	writeDict(w, http.StatusOK, done(&o))
}

// frontMan returns the agent's front-man tool name.
func (a *Agent) frontMan() string {
	if a.FrontMan != "" {
		return a.FrontMan
	}
	return a.Name[strings.LastIndexByte(a.Name, '/')+1:]
}
