package neurosan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// MessageType is the type of a [ChatMessage], carried on the wire as the
// name of the server's enum. It is a string rather than an int enum so that
// a name this package does not know (a newer server's type) passes through
// unchanged. Numeric wire values are accepted and mapped to their names; an
// unknown number is kept as its decimal text, for example "105".
type MessageType string

// The message types of neuro-san's chat.proto, with their numeric values in
// the comments. The server writes the type it cannot name as
// UNKNOWN_MESSAGE_TYPE, its enum's name for 0; the "UNKNOWN" of the
// OpenAPI description is read as TypeUnknown too.
const (
	TypeUnknown         MessageType = "UNKNOWN_MESSAGE_TYPE" // 0
	TypeSystem          MessageType = "SYSTEM"               // 1
	TypeHuman           MessageType = "HUMAN"                // 2
	TypeAI              MessageType = "AI"                   // 4
	TypeAgent           MessageType = "AGENT"                // 100
	TypeAgentFramework  MessageType = "AGENT_FRAMEWORK"      // 101
	TypeAgentToolResult MessageType = "AGENT_TOOL_RESULT"    // 103
	TypeAgentProgress   MessageType = "AGENT_PROGRESS"       // 104
)

var typeByNumber = map[int64]MessageType{
	0: TypeUnknown, 1: TypeSystem, 2: TypeHuman, 4: TypeAI, 100: TypeAgent,
	101: TypeAgentFramework, 103: TypeAgentToolResult, 104: TypeAgentProgress,
}

// UnmarshalJSON accepts a string name, a number, or null (the empty type).
func (t *MessageType) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*t = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = MessageType(s)
		if s == "UNKNOWN" {
			*t = TypeUnknown
		}
	default:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return fmt.Errorf("message type %s is neither a string nor an integer", b)
		}
		if name, ok := typeByNumber[n]; ok {
			*t = name
		} else {
			*t = MessageType(strconv.FormatInt(n, 10))
		}
	}
	return nil
}

// Origin is one step of the path through the agent graph that produced a
// message. A front-man's messages have a path of length 1.
type Origin struct {
	Tool               string `json:"tool"`
	InstantiationIndex int32  `json:"instantiation_index"`
}

// MimeData is a non-text attachment of a message (experimental upstream).
// MimeBytes travels as base64.
type MimeData struct {
	MimeType  string `json:"mime_type"`
	MimeBytes []byte `json:"mime_bytes"`
}

// ChatMessage is one message of a chat stream, or of a chat history.
//
// Fields whose shape upstream still changes (Structure, ChatContext,
// ContentBlocks) are kept as raw JSON, and every field this package does not
// know is kept in Extra, so nothing the server sends is lost. JSON null is
// treated as absent.
type ChatMessage struct {
	Type MessageType
	Text string
	// Origin is the path through the agent graph, front-man first.
	Origin []Origin
	// Structure is parsed JSON: an answer's structure_formats output, or an
	// AGENT_PROGRESS payload such as {"progress":0.5}.
	Structure json.RawMessage
	// ChatContext is the opaque conversation state; copy it verbatim into the
	// next request (see [Conversation]).
	ChatContext json.RawMessage
	// SlyData is private data kept out of the LLM's text, one raw JSON value
	// per key.
	SlyData          map[string]json.RawMessage
	ToolResultOrigin []Origin
	MimeData         []MimeData
	// ContentBlocks is the newer {"format":"langchain_v1","blocks":[…]}
	// object (MAXIMAL only).
	ContentBlocks json.RawMessage
	// Extra holds every field not listed above, by its JSON name.
	Extra map[string]json.RawMessage
}

// Progress returns the structure's "progress" value (0 to 1) of an
// AGENT_PROGRESS message, and whether it had one. A progress the server
// wrote as NaN is reported as NaN.
func (m *ChatMessage) Progress() (float64, bool) {
	if m.Type != TypeAgentProgress || len(m.Structure) == 0 {
		return 0, false
	}
	var p struct{ Progress *float64 }
	if Unmarshal(m.Structure, &p) != nil || p.Progress == nil {
		return 0, false
	}
	return *p.Progress, true
}

// UnmarshalJSON decodes a message, keeping unknown fields in Extra. It
// reads NaN, Infinity and -Infinity, which stay as written in the raw
// fields (decode those with [Unmarshal]).
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	rw, n := rewriteNonFinite(b)
	return m.decode(rw, n > 0)
}

// decode reads a message from text rewritten by nfScanner; markers says
// whether it holds any, to be restored in the raw fields.
func (m *ChatMessage) decode(rw []byte, markers bool) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rw, &fields); err != nil {
		return err
	}
	*m = ChatMessage{}
	for k, v := range fields {
		if err := m.setField(k, v); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	if markers {
		for _, v := range [][]byte{m.Structure, m.ChatContext, m.ContentBlocks} {
			restoreNonFinite(v)
		}
		for _, v := range m.SlyData {
			restoreNonFinite(v)
		}
		for _, v := range m.Extra {
			restoreNonFinite(v)
		}
	}
	return nil
}

func (m *ChatMessage) setField(k string, v json.RawMessage) error {
	if string(v) == "null" {
		return nil
	}
	switch k {
	case "type":
		return json.Unmarshal(v, &m.Type)
	case "text":
		return json.Unmarshal(v, &m.Text)
	case "origin":
		return json.Unmarshal(v, &m.Origin)
	case "tool_result_origin":
		return json.Unmarshal(v, &m.ToolResultOrigin)
	case "mime_data":
		return json.Unmarshal(v, &m.MimeData)
	case "sly_data":
		return json.Unmarshal(v, &m.SlyData)
	case "structure":
		m.Structure = v
	case "chat_context":
		m.ChatContext = v
	case "content_blocks":
		m.ContentBlocks = v
	default:
		if m.Extra == nil {
			m.Extra = make(map[string]json.RawMessage)
		}
		m.Extra[k] = v
	}
	return nil
}

// MarshalJSON encodes the message with the wire's snake_case names, omitting
// empty fields as the server does, and Extra's fields last in key order.
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	return m.appendJSON(nil)
}

func (m *ChatMessage) appendJSON(b []byte) ([]byte, error) {
	w := newObject(b)
	if m.Type != "" {
		w.Value("type", string(m.Type))
	}
	if m.Text != "" {
		w.Value("text", m.Text)
	}
	if len(m.Origin) > 0 {
		w.Value("origin", m.Origin)
	}
	w.Raw("structure", m.Structure)
	w.Raw(wire.ChatContext, m.ChatContext)
	if len(m.SlyData) > 0 {
		w.Members(wire.SlyData, m.SlyData)
	}
	if len(m.ToolResultOrigin) > 0 {
		w.Value("tool_result_origin", m.ToolResultOrigin)
	}
	if len(m.MimeData) > 0 {
		w.Value("mime_data", m.MimeData)
	}
	w.Raw("content_blocks", m.ContentBlocks)
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.Raw(k, m.Extra[k])
	}
	return w.Bytes()
}

// newObject returns an object writer appending to b that checks raw
// values as the server reads them (NaN and Infinity allowed).
func newObject(b []byte) wire.Object {
	o := wire.Into(b)
	o.Valid = validJSON
	return o
}

// appendObject appends an object of raw values, keys sorted.
func appendObject(b []byte, m map[string]json.RawMessage) ([]byte, error) {
	w := newObject(b)
	w.RawMembers(m)
	return w.Bytes()
}

func appendValue(b []byte, v any) ([]byte, error) { return wire.AppendValue(b, v) }

// ChatFilter selects which messages the server streams.
type ChatFilter string

// The chat filters. The server treats anything else as MINIMAL.
const (
	// FilterMinimal streams only the final AGENT_FRAMEWORK answer with its
	// chat_context. It is the server's default; the client then omits the
	// field, because any chat_filter_type other than the exact string
	// "MINIMAL" makes the server echo the whole request on every line.
	FilterMinimal ChatFilter = "MINIMAL"
	// FilterMaximal also streams the agents' internal messages (AI, AGENT,
	// AGENT_TOOL_RESULT, AGENT_PROGRESS), each with its origin. Every line
	// then echoes the whole request, chat_context and sly_data included,
	// so lines grow with the conversation: use it for debugging and
	// progress displays, not by default.
	FilterMaximal ChatFilter = "MAXIMAL"
)

// ChatRequest is one turn sent to StreamingChat.
type ChatRequest struct {
	// Text is the user's message, sent as user_message {"type":"HUMAN",
	// "text":…}. If empty, no user_message is sent and the server answers
	// with an empty stream.
	Text string
	// SlyData is sent as the request's sly_data, one raw JSON value per
	// key. If empty, it is omitted.
	SlyData map[string]json.RawMessage
	// ChatContext is the previous answer's chat_context, copied verbatim.
	// If empty, a new conversation starts.
	ChatContext json.RawMessage
	// Filter is the chat filter. If empty or FilterMinimal, the field is
	// omitted (the server's default, without the request echo).
	Filter ChatFilter
}

// AppendJSON appends the request's wire form to b. Raw fields are copied
// verbatim, not re-encoded.
func (r *ChatRequest) AppendJSON(b []byte) ([]byte, error) {
	w := newObject(b)
	if r.Text != "" {
		um := wire.Object{}
		um.Value("type", "HUMAN")
		um.Value("text", r.Text)
		b, _ := um.Bytes() // strings always encode
		w.Raw(wire.UserMessage, b)
	}
	if len(r.SlyData) > 0 {
		w.Members(wire.SlyData, r.SlyData)
	}
	w.Raw(wire.ChatContext, r.ChatContext)
	if r.Filter != "" && r.Filter != FilterMinimal {
		f := wire.Object{}
		f.Value(wire.ChatFilterType, string(r.Filter))
		fb, _ := f.Bytes() // a string always encodes
		w.Raw(wire.ChatFilter, fb)
	}
	return w.Bytes()
}

// AgentInfo describes one agent network in [Client.List].
type AgentInfo struct {
	AgentName   string   `json:"agent_name"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// Function is an agent network's outward description, from
// [Client.Function]. The schema fields are JSON-Schema-ish objects, kept raw.
type Function struct {
	Description         string          `json:"description,omitempty"`
	Parameters          json.RawMessage `json:"parameters,omitempty"`
	SlyDataSchema       json.RawMessage `json:"sly_data_schema,omitempty"`
	SlyDataOutputSchema json.RawMessage `json:"sly_data_output_schema,omitempty"`
}

// Connectivity is an agent network's graph, as far as the server chooses to
// tell, from [Client.Connectivity].
type Connectivity struct {
	Nodes    []Node          `json:"connectivity_info"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Node is one node of a [Connectivity] graph. DisplayAs is "llm_agent",
// "coded_tool", "langchain_tool", "external_agent" or a network's own word.
type Node struct {
	Origin    string          `json:"origin"`
	Tools     []string        `json:"tools,omitempty"`
	DisplayAs string          `json:"display_as,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}
