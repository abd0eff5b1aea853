package neurosan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// StreamingChat sends one turn to an agent network and returns its stream of
// messages. A 503 answer is retried with back-off (Options.Retries)
// before the stream starts; any other non-200 status is a [*StatusError].
//
// The turn is bounded by ctx and by Options.TurnTimeout and IdleTimeout,
// and ends when the client is closed; when any of them ends it the
// connection is closed, with the consequences described at
// [Stream.Close]. The caller must call [Stream.Close] (it is harmless
// after the end).
func (c *Client) StreamingChat(ctx context.Context, agent string, req *ChatRequest) (_ *Stream, err error) {
	defer errd.Wrap(&err, "neurosan: streaming_chat")
	return c.streamingChat(ctx, agent, req, nil)
}

// streamingChat is StreamingChat; end, if not nil, is called once when the
// stream ends, with the answer when it ended with a complete one.
func (c *Client) streamingChat(ctx context.Context, agent string, req *ChatRequest, end func(ans *ChatMessage, after error)) (*Stream, error) {
	p, err := agentPath(agent)
	if err != nil {
		return nil, err
	}
	if req == nil {
		req = &ChatRequest{}
	}
	body, err := req.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	ctx, untrack, err := c.track(ctx)
	if err != nil {
		return nil, err
	}
	s := &Stream{untrack: untrack, end: end}
	turnCtx, cancelTurn := ctx, context.CancelFunc(func() {})
	if c.opts.TurnTimeout > 0 {
		turnCtx, cancelTurn = context.WithTimeoutCause(ctx, c.opts.TurnTimeout, ErrTurnTimeout)
	}
	s.ctx, s.cancel = context.WithCancelCause(turnCtx)
	s.cancelTurn = cancelTurn
	if d := c.opts.IdleTimeout; d > 0 {
		s.idle = newIdleTimer(d, func() { // only cancels: never blocks
			s.cancel(fmt.Errorf("%w: nothing received for %v", ErrIdleTimeout, d))
		})
	}
	resp, err := c.do(s.ctx, http.MethodPost, wire.RouteChat, agent, c.base+wire.APIPrefix+p+"/"+wire.RouteChat, body, c.opts.Retries, s.idle)
	if err != nil {
		s.end = nil // the turn never started: nothing to report
		s.release()
		return nil, err
	}
	s.body = resp.Body
	s.rec = c.rec
	s.dec = newDecoder(&idleReader{r: resp.Body, idle: s.idle}, c.opts.ReadLimit)
	s.idle.arm()
	return s, nil
}

// Stream is one turn's stream of messages, the events of a turn: receive
// them with [Stream.Next] or [Stream.Events], then take the answer with
// [Stream.Answer]. Next, Events and Answer must be called from one
// goroutine at a time; Close may be called from any goroutine at any time,
// for example to cancel a turn the player abandoned.
type Stream struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	cancelTurn context.CancelFunc
	untrack    func()                              // leaves the client's set of open requests
	end        func(ans *ChatMessage, after error) // the Conversation's, or nil
	idle       *idleTimer                          // nil without IdleTimeout
	body       io.ReadCloser
	dec        *decoder
	rec        *jsonl.Queue

	err        error // sticky: io.EOF or the error that ended the stream
	answer     *ChatMessage
	heartbeats int
	closeOnce  sync.Once
	endOnce    sync.Once
}

// Next returns the next message as it arrives: an AGENT_FRAMEWORK answer,
// or with FilterMaximal the agents' intermediate messages (AI, AGENT,
// AGENT_TOOL_RESULT, AGENT_PROGRESS with a progress structure). Empty {}
// objects and empty AGENT_PROGRESS heartbeats are skipped and counted (see
// Heartbeats). At a clean end it returns io.EOF; an {"error":…} object
// returns a [*StreamError]. An error that follows a complete answer (an
// AGENT_FRAMEWORK message of the front-man with a chat_context, as the
// server's final message always has) also matches ErrAfterAnswer: the server can write
// {"error": "Request timeout"} while it cleans up after its last message,
// and the connection can drop then too; Answer keeps that answer. After an
// error or io.EOF, the stream is closed and Next keeps returning the same
// error. The message is the caller's.
//
// ctx bounds the wait. A read from an HTTP body cannot be abandoned and
// resumed, so ctx's expiry ends the turn as [Stream.Close] does, and Next
// returns ctx's error.
func (s *Stream) Next(ctx context.Context) (*ChatMessage, error) {
	if s.err != nil {
		return nil, s.err
	}
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	m, err := s.next()
	stop()
	if err != nil {
		after := error(nil)
		if err == io.EOF {
			s.body.Close() // before the cancel in Close, so the connection is reused
		} else {
			if s.complete() {
				err = &afterAnswerError{err}
				after = err
			}
			err = fmt.Errorf("neurosan: streaming_chat: %w", err)
		}
		s.err = err
		if err == io.EOF && s.answer != nil || after != nil {
			s.finish(s.answer, err) // the Conversation keeps the answer
		}
		s.Close()
		return nil, err
	}
	return m, nil
}

// fromFrontMan reports whether m can be the answer: an AGENT_FRAMEWORK
// message of the front-man, whose origin is the only one of length 1 (the
// final answer has none). A sub-network's message, relayed with a longer
// origin, is never the answer, chat_context or not (issue #33;
// docs/neurosan-protocol.md).
func (m *ChatMessage) fromFrontMan() bool {
	return m.Type == TypeAgentFramework && len(m.Origin) <= 1
}

// complete reports whether the answer read last carries a chat_context:
// the server's final message always does (an empty {} on "Event
// acknowledged"), an intermediate one need not.
func (s *Stream) complete() bool { return s.answer != nil && s.answer.ChatContext != nil }

// afterAnswerError is an error that ended a stream after its answer.
type afterAnswerError struct{ err error }

func (e *afterAnswerError) Error() string   { return "after the answer: " + e.err.Error() }
func (e *afterAnswerError) Unwrap() []error { return []error{ErrAfterAnswer, e.err} }

// Err returns the error that ended the stream: nil while it runs and after
// a clean end, otherwise the error Next returned. Call it from the
// goroutine that reads the stream, for example after Answer to learn of an
// error that followed the answer (it then matches ErrAfterAnswer).
func (s *Stream) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

func (s *Stream) next() (*ChatMessage, error) {
	for {
		kind, err := s.dec.next()
		if s.rec != nil && s.dec.top != nil {
			s.rec.Record(jsonl.In, s.dec.raw())
		}
		if err != nil {
			return nil, ctxCause(s.ctx, err)
		}
		switch kind {
		case frameEmpty:
			continue
		case frameHeartbeat:
			s.heartbeats++
			continue
		}
		m := s.dec.msg
		s.dec.msg = ChatMessage{}
		if m.fromFrontMan() {
			s.answer = &m
		}
		return &m, nil
	}
}

// Events returns the rest of the stream's messages, as [Stream.Next] does,
// for a range loop that ends with the stream: then [Stream.Answer] returns
// the answer and [Stream.Err] the error that ended the stream, if any.
// Breaking out of the loop leaves the stream open: Close it.
func (s *Stream) Events() iter.Seq[*ChatMessage] {
	return func(yield func(*ChatMessage) bool) {
		for {
			m, err := s.Next(context.Background())
			if err != nil || !yield(m) {
				return
			}
		}
	}
}

// Answer reads the rest of the stream and returns the answer: the last
// AGENT_FRAMEWORK message of the front-man (origin absent or of length 1;
// a sub-network's is never the answer), whose Text and Structure are the network's reply
// and whose ChatContext continues the conversation. It returns ErrNoAnswer
// if the stream ended cleanly without one, or the stream's error. An error
// after a complete answer does not lose it: Answer returns the answer with
// a nil error, and [Stream.Err] the error (as the Python client, which
// ignores what follows the answer). ctx bounds the wait as for
// [Stream.Next]: its expiry ends the turn.
func (s *Stream) Answer(ctx context.Context) (*ChatMessage, error) {
	for {
		if _, err := s.Next(ctx); err == io.EOF {
			break
		} else if errors.Is(err, ErrAfterAnswer) {
			return s.answer, nil
		} else if err != nil {
			return nil, err
		}
	}
	if s.answer == nil {
		return nil, fmt.Errorf("neurosan: streaming_chat: %w", ErrNoAnswer)
	}
	return s.answer, nil
}

// Heartbeats returns how many empty keep-alive frames were skipped so far.
func (s *Stream) Heartbeats() int { return s.heartbeats }

// Close closes the connection. It is idempotent and safe to call
// concurrently with Next, which then returns an error matching ErrClosed.
//
// NeuroSan has no cancel call, and the server learns that the client left
// only when its next write to the stream fails: the next message with
// FilterMaximal, the next heartbeat if the server writes them, or the
// final answer. With FilterMinimal and the heartbeat off (the server's
// defaults) the agents therefore run on to the end of the turn and keep
// its concurrency slot, so that on a server with concurrent_requests_limit
// the next turn may be refused with 503 (which the client retries).
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.cancel(ErrClosed)
		s.body.Close()
		s.release()
	})
	return nil
}

// release frees the stream's timers and contexts, leaves the client's set
// of open requests, and ends the turn for the Conversation (without an
// answer, unless Next already reported one).
func (s *Stream) release() {
	s.idle.stop()
	s.cancel(ErrClosed)
	s.cancelTurn()
	s.untrack()
	s.finish(nil, nil)
}

// finish calls the end hook once: from Next at the end of the stream, or
// from release when the stream is closed first.
func (s *Stream) finish(ans *ChatMessage, err error) {
	s.endOnce.Do(func() {
		if s.end == nil {
			return
		}
		var after error
		if ans != nil && err != io.EOF {
			after = err
		}
		s.end(ans, after)
	})
}

// idleTimer cancels a turn when nothing arrived for d. A nil *idleTimer
// does nothing. Its methods may be called from any goroutine.
type idleTimer struct {
	d  time.Duration
	mu sync.Mutex // guards following
	t  *time.Timer
	// stopped is set for good when the stream is released, so that a late
	// arm cannot restart the timer.
	stopped bool
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	it := &idleTimer{d: d, t: time.AfterFunc(d, fire)}
	it.t.Stop() // armed by the first attempt
	return it
}

// arm (re)starts the countdown: before each request attempt, and whenever
// bytes arrive.
func (it *idleTimer) arm() {
	if it == nil {
		return
	}
	it.mu.Lock()
	if !it.stopped {
		it.t.Reset(it.d)
	}
	it.mu.Unlock()
}

// pause stops the countdown during a 503 back-off, which is not idleness.
func (it *idleTimer) pause() {
	if it == nil {
		return
	}
	it.mu.Lock()
	it.t.Stop()
	it.mu.Unlock()
}

func (it *idleTimer) stop() {
	if it == nil {
		return
	}
	it.mu.Lock()
	it.stopped = true
	it.t.Stop()
	it.mu.Unlock()
}

// idleReader restarts the idle countdown whenever bytes arrive.
type idleReader struct {
	r    io.Reader
	idle *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.idle.arm()
	}
	return n, err
}
