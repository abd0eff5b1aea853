package xiaotangyuan

import (
	"context"
	"errors"
	"time"

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// Reply is the result of chat.send, chat.retry and assistant.compose: the
// authoritative final reply (stream events only preview it).
type Reply struct {
	Text          string `json:"reply"`         // the final reply text
	SessionID     string `json:"sessionId"`     // "game-<gameId>-<uuid>"
	InteractionID string `json:"interactionId"` // matches the stream events

	// Cancelled is set when a barge-in (assistant.text.cancel) cancelled
	// this interaction's stream before the result came. The Harness still
	// answers with its text; the game decides whether to show it.
	Cancelled bool `json:"-"`
}

// Call sends a request and decodes its result into result (unless nil).
// It waits at most the method's default timeout (Options.HandshakeTimeout,
// ChatTimeout or CallTimeout) or until ctx expires; neither closes the
// connection, and a late response is dropped. Writing the request is
// bounded by the connection's own 10 s write timeout rather than by ctx,
// since an interrupted write would close the shared connection. Errors:
// [*RPCError] for a Harness error, [ErrTimeout], [ErrDisconnected] (also
// for calls pending when the connection drops), [ErrMessageTooBig].
func (c *Client) Call(ctx context.Context, method string, params, result any) (err error) {
	defer wrap(&err, "call "+method)
	cn, err := c.current()
	if err != nil {
		return err
	}
	return cn.call(ctx, method, params, result, c.timeout(method))
}

// Notify sends a notification. The Harness never answers one, not even
// with an error, so prefer Call unless the protocol says otherwise. ctx
// is checked before sending; the write itself is bounded by the
// connection's 10 s write timeout, as in Call.
func (c *Client) Notify(ctx context.Context, method string, params any) (err error) {
	defer wrap(&err, "notify "+method)
	if err := ctx.Err(); err != nil {
		return err
	}
	cn, err := c.current()
	if err != nil {
		return err
	}
	return cn.notify(method, params)
}

func (c *Client) timeout(method string) time.Duration {
	switch {
	case method == wire.MethodHello:
		return c.o.HandshakeTimeout
	case isReplyMethod(method):
		return c.o.ChatTimeout
	}
	return c.o.CallTimeout
}

// Chat sends the player's text (chat.send) and returns the final reply.
// Stream events for it arrive on Events before it returns. text must not
// be blank; cc may be nil. The call waits up to Options.ChatTimeout.
//
// When ctx ends (or ChatTimeout passes) first, Chat returns at once and
// the chat is abandoned: none of its later stream events reaches Events
// (when some already did, one EventCancel with Reason ReasonAbandoned and
// its InteractionID ends its stream), and its result is dropped. The
// Harness cannot be told: protocol v1.1 has no way to cancel a request,
// and the Harness runs one request at a time per connection, so it
// finishes the abandoned chat first and every later call (Chat, Ping,
// StartVoice, UpdateState…) waits for it. Only two things cut a pending
// chat short: the player pressing the Harness media host's own
// push-to-talk key (a barge-in: an EventCancel with Reason "barge-in", and
// the chat still ends with its reply, marked [Reply].Cancelled), and the
// connection closing ([Client.SetSaveID] reconnects at once, and the new
// connection has its own queue; so does a new Client).
//
// At most 32 chat.send and chat.retry calls, abandoned ones included,
// may wait on one connection; one more fails at once.
func (c *Client) Chat(ctx context.Context, text string, cc *ChatContext) (Reply, error) {
	return c.reply(ctx, wire.MethodChat, text, cc)
}

// Retry asks again for the previous chat.send text (chat.retry). The
// Harness streams it with source "retry" and sends assistant.present. It
// is abandoned as Chat is when ctx ends first (its present is dropped
// too).
func (c *Client) Retry(ctx context.Context, cc *ChatContext) (Reply, error) {
	return c.reply(ctx, wire.MethodRetry, "", cc)
}

// Compose runs a one-off agent that does not enter chat memory
// (assistant.compose); it streams nothing. text must not be blank.
func (c *Client) Compose(ctx context.Context, text string, cc *ChatContext) (Reply, error) {
	return c.reply(ctx, wire.MethodCompose, text, cc)
}

func (c *Client) reply(ctx context.Context, method, text string, cc *ChatContext) (r Reply, err error) {
	defer wrap(&err, method)
	text = wire.Trim(text)
	if method != wire.MethodRetry && text == "" {
		return r, &ValidationError{Field: "text", Reason: "must not be blank"}
	}
	wc, err := cc.wire()
	if err != nil {
		return r, err
	}
	cn, err := c.current()
	if err != nil {
		return r, err
	}
	err = cn.call(ctx, method, wire.Chat{Text: text, Context: wc}, &r, c.o.ChatTimeout)
	return r, err
}

func stateParams(observation any, saveID string) (wire.State, error) {
	obs, err := encodeObject("observation", observation)
	if err != nil {
		return wire.State{}, err
	}
	saveID, err = trimSaveID("saveId", saveID)
	if err != nil {
		return wire.State{}, err
	}
	return wire.State{Observation: obs, SaveID: saveID}, nil
}

// UpdateState sends state.update as a request and waits for acceptance.
// observation must encode to a JSON object; saveID may be empty. For the
// periodic notification form, set Options.State.
func (c *Client) UpdateState(ctx context.Context, observation any, saveID string) (err error) {
	defer wrap(&err, wire.MethodState)
	p, err := stateParams(observation, saveID)
	if err != nil {
		return err
	}
	return c.accepted(ctx, wire.MethodState, p)
}

// StartVoice asks the Harness to start recording push-to-talk for this
// process (voice.start). It returns ErrNoProcessID without a processId.
// It does not interrupt a pending chat: voice.start waits behind it like
// every other request (see [Client.Chat]).
func (c *Client) StartVoice(ctx context.Context) error { return c.voice(ctx, wire.MethodVoiceStart) }

// StopVoice stops the recording and starts speech recognition and the
// reply (voice.stop). It returns ErrNoProcessID without a processId.
func (c *Client) StopVoice(ctx context.Context) error { return c.voice(ctx, wire.MethodVoiceStop) }

func (c *Client) voice(ctx context.Context, method string) (err error) {
	defer wrap(&err, method)
	if c.o.ProcessID <= 0 {
		return ErrNoProcessID
	}
	return c.accepted(ctx, method, nil)
}

func (c *Client) accepted(ctx context.Context, method string, params any) error {
	cn, err := c.current()
	if err != nil {
		return err
	}
	var res wire.Accepted
	if err := cn.call(ctx, method, params, &res, c.o.CallTimeout); err != nil {
		return err
	}
	if !res.Accepted {
		return errors.New("not accepted")
	}
	return nil
}

// Ping calls gateway.ping. The Harness queues it behind any running
// request, so it measures the request queue, not liveness (the client
// uses WebSocket pings for that).
func (c *Client) Ping(ctx context.Context) (err error) {
	defer wrap(&err, wire.MethodPing)
	cn, err := c.current()
	if err != nil {
		return err
	}
	var res wire.Pong
	if err := cn.call(ctx, wire.MethodPing, nil, &res, c.o.CallTimeout); err != nil {
		return err
	}
	if !res.Pong {
		return errors.New("no pong in result")
	}
	return nil
}
