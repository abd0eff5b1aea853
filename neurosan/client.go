package neurosan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// ClientOptions configures a [Client]. A nil *ClientOptions means defaults.
type ClientOptions struct {
	// HTTPClient sends the requests. If nil, a client over
	// http.DefaultTransport is used. Its Timeout must be zero: it would cut
	// long streams, and New refuses it; use TurnTimeout instead.
	HTTPClient *http.Client
	// Header is added to every request, for example the forwarded metadata
	// headers "request_id" and "user_id" that the server copies into its
	// logs. New copies it.
	Header http.Header
	// TurnTimeout bounds a whole turn (and a List, Function, Connectivity,
	// CallTool or probe call), from the request to the end of the
	// response, on top of the caller's context. If zero, there is none,
	// as on the server: a network has no request timeout unless its
	// request_timeout_seconds sets one (the server then ends the turn
	// itself with {"error": "Request timeout"}), and turns of several
	// minutes are normal. If set, make it exceed that timeout: cutting a
	// turn does not stop the agents (see [Stream.Close]). Negative also
	// means none.
	TurnTimeout time.Duration
	// IdleTimeout bounds the wait for the next bytes of a response. If
	// zero, there is none: the server's heartbeat is off by default, so a
	// MINIMAL turn is silent until its answer, however long the agents
	// work. When the server writes heartbeats (an interval N set with
	// AGENT_STREAM_KEEP_ALIVE_WITH_PROGRESS_INTERVAL_SECONDS), set it to
	// about 3N to notice a dead server or a dropped proxy connection
	// within that. Negative also means none.
	IdleTimeout time.Duration
	// MaxMessageBytes bounds one JSON object of a stream, and a whole List,
	// Function or Connectivity body. chat_context grows with the history,
	// and MAXIMAL echoes it on every line. If zero, 64 MiB is used.
	// Negative disables the limit.
	MaxMessageBytes int64
	// Retries is how many times a request answered with 503 (before any
	// stream started) is sent again. It is never retried once a 200 stream
	// has begun. If zero, 3 is used. Negative disables retries.
	Retries int
	// RetryBackoff is the wait before the first retry; it doubles on each
	// retry, with up to 25% jitter, capped at 30 s. A Retry-After header in
	// seconds overrides it (also capped). If zero, 500 ms is used.
	RetryBackoff time.Duration
	// Recorder, if not nil, receives a JSON Lines log of every request body
	// sent and every object or error body received (see internal/jsonl).
	// The client never closes it.
	Recorder io.Writer
	// Logf reports warnings, such as plain http:// to a non-loopback host.
	// If nil, log.Printf is used.
	Logf func(format string, args ...any)
}

// The turn and idle timeouts have no default: the server has none (see
// ClientOptions).
const (
	defaultMaxMessageBytes = 64 << 20
	defaultRetries         = 3
	defaultRetryBackoff    = 500 * time.Millisecond
	maxRetryBackoff        = 30 * time.Second
)

func (o *ClientOptions) withDefaults() ClientOptions {
	var c ClientOptions
	if o != nil {
		c = *o
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	c.Header = c.Header.Clone()
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = defaultMaxMessageBytes
	}
	if c.Retries == 0 {
		c.Retries = defaultRetries
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = defaultRetryBackoff
	}
	if c.Logf == nil {
		c.Logf = log.Printf
	}
	return c
}

// Client talks to one NeuroSan server. All methods may be called
// concurrently. A Client holds no connections of its own beyond its
// HTTPClient's pool, so it needs no Close.
type Client struct {
	base string // scheme://host[:port][/path], no trailing slash
	opts ClientOptions
	rec  *jsonl.Recorder
}

// New returns a client of the server at baseURL (for example
// "http://localhost:8080"). A NeuroSan server has no authentication by
// default and may be remote, so plain http:// to a host that is not
// loopback is reported through Logf: use https:// across networks.
func New(baseURL string, opts *ClientOptions) (_ *Client, err error) {
	defer errd.Wrap(&err, "neurosan: new client")
	o := opts.withDefaults()
	if o.HTTPClient.Timeout != 0 {
		return nil, errors.New("HTTPClient.Timeout must be zero (it would cut long streams); use TurnTimeout")
	}
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
		o.Logf("neurosan: warning: %s is plain http to a non-loopback host; sly_data and chat_context travel unencrypted", baseURL)
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), opts: o, rec: jsonl.New(o.Recorder)}, nil
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
	err = c.callJSON(ctx, http.MethodGet, "list", "", c.base+"/api/v1/list", nil, c.opts.Retries, &resp)
	return resp.Agents, err
}

// Function returns an agent network's outward description. An unknown agent
// gives a [*StatusError] matching ErrNotFound.
func (c *Client) Function(ctx context.Context, agent string) (_ *Function, err error) {
	defer errd.Wrap(&err, "neurosan: function")
	var resp struct {
		Function Function `json:"function"`
	}
	if err := c.getAgent(ctx, "function", agent, &resp); err != nil {
		return nil, err
	}
	return &resp.Function, nil
}

// Connectivity returns an agent network's graph, as far as the server tells.
func (c *Client) Connectivity(ctx context.Context, agent string) (_ *Connectivity, err error) {
	defer errd.Wrap(&err, "neurosan: connectivity")
	var resp Connectivity
	if err := c.getAgent(ctx, "connectivity", agent, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Client) getAgent(ctx context.Context, op, agent string, v any) error {
	p, err := agentPath(agent)
	if err != nil {
		return err
	}
	return c.callJSON(ctx, http.MethodGet, op, agent, c.base+"/api/v1/"+p+"/"+op, nil, c.opts.Retries, v)
}

// callJSON makes one JSON call (503 retried up to retries times) and
// decodes its 200 body into v.
func (c *Client) callJSON(ctx context.Context, method, op, agent, u string, body []byte, retries int, v any) error {
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
	if c.opts.MaxMessageBytes < 0 {
		return io.ReadAll(r)
	}
	b, err := io.ReadAll(io.LimitReader(r, c.opts.MaxMessageBytes+1))
	if err == nil && int64(len(b)) > c.opts.MaxMessageBytes {
		err = fmt.Errorf("%w: body exceeds %d bytes", ErrMessageTooBig, c.opts.MaxMessageBytes)
	}
	return b, err
}

// do sends a request, retrying 503 answers with back-off up to retries
// times, and returns a 200 response or a *StatusError. Nothing is retried
// once a 200 arrived. The idle timer (may be nil) runs during each attempt,
// not during back-off.
func (c *Client) do(ctx context.Context, method, op, agent, u string, body []byte, retries int, idle *idleTimer) (*http.Response, error) {
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
		if err := sleep(ctx, c.backoff(attempt, resp.Header.Get("Retry-After"))); err != nil {
			return nil, fmt.Errorf("%w (waiting to retry after %v)", err, serr)
		}
	}
}

func (c *Client) backoff(attempt int, retryAfter string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		// Compare in seconds: s*time.Second can wrap to a negative duration.
		return time.Duration(min(s, int(maxRetryBackoff/time.Second))) * time.Second
	}
	d := c.opts.RetryBackoff
	for i := 1; i < attempt && d < maxRetryBackoff; i++ {
		d *= 2 // stops at the cap, so a huge RetryBackoff cannot overflow
	}
	d = min(d, maxRetryBackoff)
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	return min(d, maxRetryBackoff)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
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
