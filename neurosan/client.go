package neurosan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/backoff"
	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// Client talks to one NeuroSan server. All methods may be called
// concurrently. It holds no connection of its own (HTTP requests use its
// HTTPClient's pool) and starts no goroutine, except the one writing
// Options.Recorder when it is set.
type Client struct {
	base string // scheme://host[:port][/path], no trailing slash
	opts Options
	rec  *jsonl.Queue

	mu     sync.Mutex // guards following
	closed bool
	nextID uint64
	open   map[uint64]context.CancelCauseFunc // requests and streams in flight, cancelled by Close
}

// New returns a client of the server at baseURL (for example
// "http://localhost:8080"). It sends nothing: call [Client.Connect] to
// check that the server is up. An invalid option is a [*ConfigError]. A
// NeuroSan server has no authentication by default and may be remote, so
// plain http:// to a host that is not loopback is logged as a warning:
// use https:// across networks.
func New(baseURL string, opts *Options) (_ *Client, err error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	defer errd.Wrap(&err, "neurosan: new")
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("base URL %q must be http:// or https:// with a host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("base URL %q must have no user, query or fragment", baseURL)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		o.Logger.Warn("neurosan: plain http to a host that is not loopback; sly_data and chat_context travel unencrypted", "url", baseURL)
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), opts: o, rec: jsonl.NewQueue(o.Recorder, jsonl.MaxQueued), open: map[uint64]context.CancelCauseFunc{}}, nil
}

// Connect checks that the server is up and ready: one readiness probe
// (GET /readyz, as [Client.Ready]), bounded by ctx and by
// Options.HandshakeTimeout. An HTTP client keeps no connection open, so
// nothing keeps running afterwards, and the other methods do not need
// Connect; it is the first network operation of the shape every client in
// the module shares (New, Connect, receive, send, Close), and tells a game
// at start that the server cannot be reached. A failure is returned as
// is: call Connect again to retry.
func (c *Client) Connect(ctx context.Context) (err error) {
	defer errd.Wrap(&err, "neurosan: connect")
	ctx, cancel := context.WithTimeout(ctx, c.opts.HandshakeTimeout)
	defer cancel()
	_, err = c.probe(ctx, wire.ProbeReady)
	return err
}

// Close cancels every request and stream in flight (a stream's Next then
// returns an error matching ErrClosed; see [Stream.Close] for what the
// server does with its turn) and closes the HTTPClient's idle connections.
// Later calls return [ErrClosed]. It is idempotent and returns at once,
// except that it writes what waits for Options.Recorder first and stops
// the goroutine writing it (bounded: see Options.Recorder).
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	open := c.open
	c.open = nil
	c.mu.Unlock()
	for _, cancel := range open {
		cancel(ErrClosed)
	}
	c.opts.HTTPClient.CloseIdleConnections()
	if err := c.rec.Close(); err != nil { // what was recorded is written
		c.opts.Logger.Warn("neurosan: recording incomplete", "err", err)
	}
	return nil
}

// track returns a context of ctx that Close cancels, and the func that
// releases it; after Close it fails with ErrClosed.
func (c *Client) track(ctx context.Context) (context.Context, func(), error) {
	ctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cancel(ErrClosed)
		return nil, nil, ErrClosed
	}
	c.rec.Start() // the first request starts the recorder's goroutine
	c.nextID++
	id := c.nextID
	c.open[id] = cancel
	return ctx, func() {
		c.mu.Lock()
		delete(c.open, id)
		c.mu.Unlock()
		cancel(ErrClosed)
	}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// agentPath escapes each /-separated segment of an agent name, keeping the
// slashes: the server matches {agent} with (.+), so nested names work.
func agentPath(agent string) (string, error) {
	segs := strings.Split(agent, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("%w: %q", ErrInvalidAgent, agent)
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), nil
}

// List returns the server's public agent networks.
func (c *Client) List(ctx context.Context) (_ []AgentInfo, err error) {
	defer errd.Wrap(&err, "neurosan: list")
	var resp struct {
		Agents []AgentInfo `json:"agents"`
	}
	err = c.callJSON(ctx, http.MethodGet, wire.RouteList, "", c.base+wire.APIPrefix+wire.RouteList, nil, c.opts.Retries, &resp)
	return resp.Agents, err
}

// Function returns an agent network's outward description. An unknown agent
// gives a [*StatusError] matching ErrNotFound.
func (c *Client) Function(ctx context.Context, agent string) (_ *Function, err error) {
	defer errd.Wrap(&err, "neurosan: function")
	var resp struct {
		Function Function `json:"function"`
	}
	if err := c.getAgent(ctx, wire.RouteFunction, agent, &resp); err != nil {
		return nil, err
	}
	return &resp.Function, nil
}

// Connectivity returns an agent network's graph, as far as the server tells.
func (c *Client) Connectivity(ctx context.Context, agent string) (_ *Connectivity, err error) {
	defer errd.Wrap(&err, "neurosan: connectivity")
	var resp Connectivity
	if err := c.getAgent(ctx, wire.RouteConnect, agent, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Client) getAgent(ctx context.Context, op, agent string, v any) error {
	p, err := agentPath(agent)
	if err != nil {
		return err
	}
	return c.callJSON(ctx, http.MethodGet, op, agent, c.base+wire.APIPrefix+p+"/"+op, nil, c.opts.Retries, v)
}

// callJSON makes one JSON call (503 retried up to retries times) and
// decodes its 200 body into v.
func (c *Client) callJSON(ctx context.Context, method, op, agent, u string, body []byte, retries int, v any) error {
	ctx, release, err := c.track(ctx)
	if err != nil {
		return err
	}
	defer release()
	if c.opts.TurnTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.opts.TurnTimeout, ErrTurnTimeout)
		defer cancel()
	}
	resp, err := c.do(ctx, method, op, agent, u, body, retries, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	in, err := c.readAll(resp.Body)
	if err != nil {
		return ctxCause(ctx, err)
	}
	c.rec.RecordNote(jsonl.In, "200 "+op, in)
	if err := unmarshalRaw(in, v); err != nil {
		return &DecodeError{Err: err}
	}
	return nil
}

func (c *Client) readAll(r io.Reader) ([]byte, error) {
	if c.opts.ReadLimit < 0 {
		return io.ReadAll(r)
	}
	b, err := io.ReadAll(io.LimitReader(r, c.opts.ReadLimit+1))
	if err == nil && int64(len(b)) > c.opts.ReadLimit {
		err = fmt.Errorf("%w: body exceeds %d bytes", ErrMessageTooBig, c.opts.ReadLimit)
	}
	return b, err
}

// do sends a request, retrying 503 answers with back-off up to retries
// times, and returns a 200 response or a *StatusError. Nothing is retried
// once a 200 arrived. The idle timer (may be nil) runs during each attempt,
// not during back-off.
func (c *Client) do(ctx context.Context, method, op, agent, u string, body []byte, retries int, idle *idleTimer) (*http.Response, error) {
	b := backoff.Backoff{Min: c.opts.RetryBackoff, Max: maxRetryBackoff, Jitter: 0.25}
	for attempt := 1; ; attempt++ {
		idle.arm()
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range c.opts.Header {
			req.Header[k] = v
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		c.rec.RecordNote(jsonl.Out, method+" "+u, body)
		resp, err := c.opts.HTTPClient.Do(req)
		if err != nil {
			return nil, ctxCause(ctx, err)
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		c.rec.RecordNote(jsonl.In, resp.Status, msg)
		serr := &StatusError{Op: op, Agent: agent, StatusCode: resp.StatusCode, Message: errorMessage(msg), Attempts: attempt}
		if resp.StatusCode != http.StatusServiceUnavailable || attempt > retries {
			return nil, serr
		}
		idle.pause()
		if err := backoff.Wait(ctx, retryWait(&b, resp.Header.Get("Retry-After"))); err != nil {
			return nil, fmt.Errorf("%w (waiting to retry after %v)", err, serr)
		}
	}
}

// retryWait is the back-off's next wait, or Retry-After in seconds (capped
// at 30 s) when the server sent one.
func retryWait(b *backoff.Backoff, retryAfter string) time.Duration {
	d := b.Next()
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		// Compare in seconds: s*time.Second can wrap to a negative duration.
		return time.Duration(min(s, int(maxRetryBackoff/time.Second))) * time.Second
	}
	return d
}

// ctxCause replaces a transport error caused by ctx with ctx's cause, which
// says why (ErrTurnTimeout, ErrIdleTimeout, ErrClosed or the caller's).
func ctxCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
	}
	return err
}
