package neurosan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// ConversationOptions configures a [Conversation]. A nil
// *ConversationOptions means defaults.
type ConversationOptions struct {
	// Filter is the chat filter of every turn. If empty, FilterMinimal.
	Filter ChatFilter
	// MaxContextBytes is a budget for the stored chat_context. When an
	// answer's chat_context is larger, it is dropped and the next turn
	// starts a new conversation (sly_data is kept); ContextDrops counts
	// this. If zero, there is no budget; negative disables it too.
	MaxContextBytes int
}

// Conversation is a multi-turn chat with one agent network. NeuroSan keeps
// no session: the conversation is the opaque chat_context of the last
// answer, sent back verbatim on the next turn, and the sly_data the client
// holds. A Conversation keeps both, and can be saved and restored with
// MarshalJSON and UnmarshalJSON (one per save slot).
//
// All methods may be called concurrently, but only one turn (Send or
// Stream) may be in flight: a second one returns ErrBusy.
type Conversation struct {
	client *Client
	agent  string
	opts   ConversationOptions

	mu      sync.Mutex // guards following
	busy    bool
	context json.RawMessage
	sly     map[string]json.RawMessage
	answer  *ChatMessage
	dropped int
}

// NewConversation starts a conversation with an agent network. It sends
// nothing until Send.
func NewConversation(c *Client, agent string, opts *ConversationOptions) *Conversation {
	var o ConversationOptions
	if opts != nil {
		o = *opts
	}
	return &Conversation{client: c, agent: agent, opts: o, sly: map[string]json.RawMessage{}}
}

// Send sends one turn and returns the answer: the last AGENT_FRAMEWORK
// message of the front-man (see [Stream.Answer]), whose Text and Structure
// are the reply. On success the answer's
// chat_context replaces the stored one and its sly_data is merged into the
// stored sly_data, key by key. An empty chat_context (none, or {}, which
// the server sends with "Event acknowledged" and with the error text of a
// network that could not start) carries no history: the stored one is
// kept. An error after a complete answer (see [ErrAfterAnswer]) is not a
// failure: the answer is kept and returned, and the error is logged as a
// warning (Options.Logger). On any other error nothing changes, so the
// turn can be sent again. ctx bounds the turn; see [Client.StreamingChat].
// To show the messages of the turn as they arrive, use
// [Conversation.Stream].
func (cv *Conversation) Send(ctx context.Context, text string) (_ *ChatMessage, err error) {
	defer errd.Wrap(&err, "neurosan: conversation")
	s, err := cv.stream(ctx, text)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Answer(ctx)
}

// Stream sends one turn, as Send does, and returns its stream, whose
// messages (intermediate ones too, with FilterMaximal) the caller
// receives with [Stream.Next] or [Stream.Events], and whose answer it
// takes with [Stream.Answer]. When the stream ends with a complete answer
// the conversation keeps it, as Send does; when it is closed first, the
// conversation is unchanged. The turn is in flight until then: Close the
// stream.
func (cv *Conversation) Stream(ctx context.Context, text string) (_ *Stream, err error) {
	defer errd.Wrap(&err, "neurosan: conversation")
	return cv.stream(ctx, text)
}

func (cv *Conversation) stream(ctx context.Context, text string) (*Stream, error) {
	req, err := cv.begin(text)
	if err != nil {
		return nil, err
	}
	s, err := cv.client.streamingChat(ctx, cv.agent, req, func(ans *ChatMessage, after error) {
		if ans != nil {
			cv.commit(ans)
		}
		if after != nil {
			cv.client.opts.Logger.Warn("neurosan: the answer was kept despite an error after it", "agent", cv.agent, "err", after)
		}
		cv.end()
	})
	if err != nil {
		cv.end()
		return nil, err
	}
	return s, nil
}

func (cv *Conversation) begin(text string) (*ChatRequest, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.busy {
		return nil, ErrBusy
	}
	cv.busy = true
	return &ChatRequest{Text: text, SlyData: maps.Clone(cv.sly), ChatContext: cv.context, Filter: cv.opts.Filter}, nil
}

func (cv *Conversation) end() {
	cv.mu.Lock()
	cv.busy = false
	cv.mu.Unlock()
}

func (cv *Conversation) commit(ans *ChatMessage) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.answer = ans
	maps.Copy(cv.sly, ans.SlyData)
	if emptyObject(ans.ChatContext) {
		return
	}
	if cv.opts.MaxContextBytes > 0 && len(ans.ChatContext) > cv.opts.MaxContextBytes {
		cv.context = nil
		cv.dropped++
		return
	}
	cv.context = ans.ChatContext
}

// emptyObject reports a JSON value that is absent or {}.
func emptyObject(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return true
	}
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// Answer returns the last turn's answer, or nil before the first one (and
// after UnmarshalJSON, which does not restore it).
func (cv *Conversation) Answer() *ChatMessage {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.answer
}

// ChatContext returns the stored chat_context (nil for a new conversation).
// The caller must not modify it.
func (cv *Conversation) ChatContext() json.RawMessage {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.context
}

// ContextDrops returns how many times the chat_context was dropped for
// exceeding MaxContextBytes.
func (cv *Conversation) ContextDrops() int {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.dropped
}

// SlyData returns a copy of the stored sly_data.
func (cv *Conversation) SlyData() map[string]json.RawMessage {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return maps.Clone(cv.sly)
}

// SetSlyData stores v (encoded as JSON) under key, to be sent with every
// following turn. A nil v deletes the key.
func (cv *Conversation) SetSlyData(key string, v any) (err error) {
	defer errd.Wrap(&err, "neurosan: set sly_data")
	var raw []byte
	if v != nil {
		if raw, err = appendValue(nil, v); err != nil {
			return err
		}
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if raw == nil {
		delete(cv.sly, key)
	} else {
		cv.sly[key] = raw
	}
	return nil
}

// Reset forgets the chat_context (the next turn starts a new conversation)
// and the last answer; sly_data is kept.
func (cv *Conversation) Reset() {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.context, cv.answer = nil, nil
}

// saved is the save-slot form of a Conversation. Version 1 held
// chat_context and sly_data as JSON values; version 2 holds their JSON text
// as strings, so that re-encoding the slot (json.Marshal compacts the
// output of MarshalJSON) cannot change a byte of them, and values that
// encoding/json rejects (the NaN and Infinity that Python writes) survive.
type saved struct {
	Version     int             `json:"v"`
	Agent       string          `json:"agent"`
	ChatContext json.RawMessage `json:"chat_context,omitempty"`
	SlyData     json.RawMessage `json:"sly_data,omitempty"`
}

// MarshalJSON returns the conversation's state for a save slot:
// {"v":2,"agent":…,"chat_context":"…","sly_data":"…"}, where the last two
// are the JSON texts of the stored chat_context and sly_data, kept as
// strings so that they come back byte for byte (see [Conversation.UnmarshalJSON]).
func (cv *Conversation) MarshalJSON() ([]byte, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	w := newObject(nil)
	w.Value("v", 2)
	w.Value("agent", cv.agent)
	if len(cv.context) > 0 {
		w.Value(wire.ChatContext, string(cv.context))
	}
	if len(cv.sly) > 0 {
		sly, err := appendObject(nil, cv.sly)
		if err != nil {
			return nil, err
		}
		w.Value(wire.SlyData, string(sly))
	}
	return w.Bytes()
}

// UnmarshalJSON restores a state saved by MarshalJSON (version 2, or the
// version 1 of earlier releases), replacing the stored chat_context and
// sly_data. The saved agent must be this conversation's.
func (cv *Conversation) UnmarshalJSON(b []byte) (err error) {
	defer errd.Wrap(&err, "neurosan: restore conversation")
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s.Version != 1 && s.Version != 2 {
		return fmt.Errorf("unknown save version %d", s.Version)
	}
	if string(s.ChatContext) == "null" {
		s.ChatContext = nil
	}
	if string(s.SlyData) == "null" {
		s.SlyData = nil
	}
	if s.Version == 2 {
		if s.ChatContext, err = unquote("chat_context", s.ChatContext); err != nil {
			return err
		}
		if s.SlyData, err = unquote("sly_data", s.SlyData); err != nil {
			return err
		}
	}
	sly := map[string]json.RawMessage{}
	if len(s.SlyData) > 0 {
		if err := unmarshalRaw(s.SlyData, &sly); err != nil {
			return fmt.Errorf("sly_data: %w", err)
		}
	}
	if len(s.ChatContext) > 0 && !validJSON(s.ChatContext) {
		return errors.New("chat_context is not JSON")
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if s.Agent != cv.agent {
		return fmt.Errorf("saved for agent %q, not %q", s.Agent, cv.agent)
	}
	cv.context, cv.sly, cv.answer = s.ChatContext, sly, nil
	return nil
}

// unquote reads a version 2 member: a string holding JSON text.
func unquote(name string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: want a string of JSON text: %w", name, err)
	}
	return json.RawMessage(s), nil
}
