// Package wire holds the RPEngine protocol v3 envelope codec shared by the
// game-side server (package rpengine) and the fake engine (enginetest):
// envelope constants, header decoding with the checks upstream's engine
// applies, splicing envelope fields in front of a flat payload, and the
// bounded messageId duplicate window.
package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"time"
	"unsafe"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// Protocol constants (docs/rpengine-protocol.md, Envelope).
const (
	Protocol        = "gemtavern.rp_engine"
	ProtocolVersion = 3
	// MaxMessageBytes is the 8 MiB limit on one message, both directions.
	MaxMessageBytes = 8 << 20
)

// Message types of the catalogue (docs/rpengine-protocol.md).
const (
	TypeHello             = "hello"
	TypeWelcome           = "welcome"
	TypeAck               = "ack"
	TypeCapacity          = "capacity.update"
	TypeCharacterSync     = "character.sync"
	TypeCharacterSynced   = "character.synced"
	TypeReplyRequest      = "reply.request"
	TypeReplyAccepted     = "reply.accepted"
	TypeTextDelta         = "reply.text.delta"
	TypeTextCompleted     = "reply.text.completed"
	TypeAudioStart        = "reply.audio.start"
	TypeAudioChunk        = "reply.audio.chunk"
	TypeAudioCompleted    = "reply.audio.completed"
	TypeReplyCompleted    = "reply.completed"
	TypeReplyCancelled    = "reply.cancelled"
	TypeRequestError      = "request.error"
	TypeRequestCancel     = "request.cancel"
	TypeCaptureStart      = "voice.capture.start"
	TypeCaptureStop       = "voice.capture.stop"
	TypeCaptureCancel     = "voice.capture.cancel"
	TypeCaptureLevel      = "voice.capture.level"
	TypeCaptureState      = "voice.capture.state"
	TypeCaptureTranscript = "voice.capture.transcript"
)

// TypeOf returns typ as a string: one of the Type constants, without
// allocating, or a copy of an unknown type.
func TypeOf(typ []byte) string {
	switch string(typ) {
	case TypeAck:
		return TypeAck
	case TypeAudioChunk:
		return TypeAudioChunk
	case TypeTextDelta:
		return TypeTextDelta
	case TypeCapacity:
		return TypeCapacity
	case TypeHello:
		return TypeHello
	case TypeReplyAccepted:
		return TypeReplyAccepted
	case TypeTextCompleted:
		return TypeTextCompleted
	case TypeAudioStart:
		return TypeAudioStart
	case TypeAudioCompleted:
		return TypeAudioCompleted
	case TypeReplyCompleted:
		return TypeReplyCompleted
	case TypeCaptureLevel:
		return TypeCaptureLevel
	}
	return string(typ)
}

// Header is the envelope part of a message, plus the fields the router
// needs. Payload fields are decoded separately from the same bytes.
type Header struct {
	Protocol        string          `json:"protocol"`
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
	Type            string          `json:"type"`
	MessageID       string          `json:"messageId"`
	SessionID       *string         `json:"sessionId"`
	Timestamp       string          `json:"timestamp"`
	RequestID       *string         `json:"requestId"`
}

// Sentinel causes of a refused envelope; DecodeHeader wraps them.
var (
	ErrNotJSON         = errors.New("not a JSON object")
	ErrProtocol        = errors.New("unsupported protocol")
	ErrProtocolVersion = errors.New("unsupported protocol version")
	ErrMissingField    = errors.New("missing required envelope field")
	ErrTooBig          = errors.New("message exceeds 8 MiB")
)

// DecodeHeader decodes and checks the envelope of one message: a JSON
// object, protocol exactly "gemtavern.rp_engine", protocolVersion exactly
// the integer 3, non-empty string type, messageId and timestamp.
//
// A message of the plain shape engines send (one flat object, strings
// without escapes, numbers, booleans: an ack, capacity.update) is read by
// the chunk decoder's scanner, into one allocation for its strings and
// one for its pointers; anything else goes through encoding/json, the
// reference, which FuzzDecodeHeader_fastPath checks the scanner against
// (issue #24: encoding/json cost about ten allocations a header).
func DecodeHeader(data []byte) (Header, error) {
	if len(data) > MaxMessageBytes {
		return Header{}, fmt.Errorf("%w: %d bytes", ErrTooBig, len(data))
	}
	f := rawFields{header: true}
	if !f.scan(data) {
		return decodeHeaderJSON(data)
	}
	return f.toHeader(), checkEnvelope(f.protocol, f.version, f.typ, f.messageID, f.timestamp)
}

// Envelope is the envelope of one message as DecodeEnvelope finds it:
// views into the message's text, valid as long as it is.
type Envelope struct {
	Type, MessageID []byte
	// SessionID and RequestID are nil when absent or null.
	SessionID, RequestID []byte
	// Checked says that every byte of the message was read as plain JSON
	// text: it is valid UTF-8 (a reader need not check again).
	Checked bool
}

// DecodeEnvelope is DecodeHeader without copying: the fields it returns
// alias msg, and a message of the plain shape engines send (an audio
// chunk included, whatever its size) costs no allocation. The reader of a
// connection routes every message with it.
func DecodeEnvelope(msg []byte) (Envelope, error) {
	if len(msg) > MaxMessageBytes {
		return Envelope{}, fmt.Errorf("%w: %d bytes", ErrTooBig, len(msg))
	}
	f := rawFields{header: true}
	if f.scan(msg) {
		return Envelope{Type: f.typ, MessageID: f.messageID, SessionID: f.sessionID, RequestID: f.requestID, Checked: true},
			checkEnvelope(f.protocol, f.version, f.typ, f.messageID, f.timestamp)
	}
	h, err := decodeHeaderJSON(msg)
	env := Envelope{Type: []byte(h.Type), MessageID: []byte(h.MessageID)}
	if h.SessionID != nil {
		env.SessionID = []byte(*h.SessionID)
	}
	if h.RequestID != nil {
		env.RequestID = []byte(*h.RequestID)
	}
	return env, err
}

// toHeader copies the envelope fields the scanner found into a Header:
// the strings share one buffer (and ProtocolVersion its own part of it),
// the two pointers one allocation.
func (f *rawFields) toHeader() Header {
	buf := make([]byte, 0, len(f.protocol)+len(f.version)+len(f.typ)+len(f.messageID)+len(f.timestamp)+len(f.sessionID)+len(f.requestID))
	str := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		buf = append(buf, b...)
		s := buf[len(buf)-len(b):]
		return unsafe.String(&s[0], len(s))
	}
	h := Header{Protocol: str(f.protocol), Type: str(f.typ), MessageID: str(f.messageID), Timestamp: str(f.timestamp)}
	if f.version != nil {
		buf = append(buf, f.version...)
		h.ProtocolVersion = json.RawMessage(buf[len(buf)-len(f.version) : len(buf) : len(buf)])
	}
	if f.sessionID != nil || f.requestID != nil {
		ptrs := new([2]string)
		if f.sessionID != nil {
			ptrs[0] = str(f.sessionID)
			h.SessionID = &ptrs[0]
		}
		if f.requestID != nil {
			ptrs[1] = str(f.requestID)
			h.RequestID = &ptrs[1]
		}
	}
	return h
}

// decodeHeaderJSON is DecodeHeader with encoding/json.
func decodeHeaderJSON(data []byte) (Header, error) {
	var h Header
	d := bytes.TrimLeft(data, " \t\r\n")
	if len(d) == 0 || d[0] != '{' {
		return h, ErrNotJSON
	}
	if err := json.Unmarshal(data, &h); err != nil {
		// encoding/json quotes a mistyped number whole.
		return h, fmt.Errorf("%w: %s", ErrNotJSON, peertext.Clip(err.Error(), peertext.LogBytes))
	}
	return h, checkEnvelope(h.Protocol, h.ProtocolVersion, h.Type, h.MessageID, h.Timestamp)
}

// checkEnvelope applies the envelope rules (docs/rpengine-protocol.md,
// "Envelope") to a decoded envelope, for DecodeHeader and ChunkDecoder
// alike: protocol exactly "gemtavern.rp_engine", protocolVersion exactly
// the integer 3 (its JSON text), non-empty type, messageId and timestamp.
func checkEnvelope[S string | []byte](protocol S, version []byte, typ, messageID, timestamp S) error {
	switch {
	case string(protocol) != Protocol:
		return fmt.Errorf("%w: %s", ErrProtocol, peertext.Quote(string(protocol), peertext.LogBytes))
	case string(version) != protocolVersionText:
		return fmt.Errorf("%w: %s", ErrProtocolVersion, peertext.Clip(string(version), peertext.LogBytes))
	case len(typ) == 0:
		return fmt.Errorf("%w: type", ErrMissingField)
	case len(messageID) == 0:
		return fmt.Errorf("%w: messageId", ErrMissingField)
	case len(timestamp) == 0:
		return fmt.Errorf("%w: timestamp", ErrMissingField)
	}
	return nil
}

// protocolVersionText is ProtocolVersion as JSON text.
var protocolVersionText = strconv.Itoa(ProtocolVersion)

// NewID returns a random UUIDv4 string.
func NewID() string {
	var s [36]byte
	return string(AppendID(s[:0]))
}

// AppendID appends a random UUIDv4 (36 bytes) to b.
func AppendID(b []byte) []byte {
	var r [16]byte
	_, _ = rand.Read(r[:])
	r[6] = r[6]&0x0f | 0x40
	r[8] = r[8]&0x3f | 0x80
	b = hex.AppendEncode(b, r[0:4])
	b = append(b, '-')
	b = hex.AppendEncode(b, r[4:6])
	b = append(b, '-')
	b = hex.AppendEncode(b, r[6:8])
	b = append(b, '-')
	b = hex.AppendEncode(b, r[8:10])
	b = append(b, '-')
	return hex.AppendEncode(b, r[10:])
}

// timestampLayout is ISO 8601 UTC with milliseconds.
const timestampLayout = "2006-01-02T15:04:05.000Z"

// Timestamp formats t as ISO 8601 UTC with milliseconds.
func Timestamp(t time.Time) string {
	return t.UTC().Format(timestampLayout)
}

// Encode returns the message: envelope fields followed by the fields of
// payload, which must marshal to a JSON object (or be nil). sessionID ""
// omits the sessionId field.
func Encode(typ, messageID, sessionID string, now time.Time, payload any) ([]byte, error) {
	var body []byte
	if payload != nil {
		var err error
		if body, err = json.Marshal(payload); err != nil {
			return nil, err
		}
		if len(body) < 2 || body[0] != '{' {
			return nil, fmt.Errorf("wire: payload of %s is not an object", typ)
		}
	}
	b := make([]byte, 0, 160+len(body))
	b = append(b, `{"protocol":"`+Protocol+`","protocolVersion":3,"type":`...)
	// JSON string quoting, not strconv.Quote, whose \x escapes are not
	// JSON (found by FuzzDecodeHeader: a type holding U+007F).
	b = appendString(b, typ)
	b = append(b, `,"messageId":`...)
	b = appendString(b, messageID)
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = appendString(b, sessionID)
	}
	b = append(b, `,"timestamp":"`...)
	b = append(b, Timestamp(now)...)
	b = append(b, '"')
	if len(body) > 2 {
		b = append(b, ',')
		b = append(b, body[1:]...)
	} else {
		b = append(b, '}')
	}
	return b, nil
}

// appendString appends s as a JSON string: printable ASCII without quote
// or backslash as it is (ids and types, without allocating), anything
// else through encoding/json.
func appendString[S string | []byte](b []byte, s S) []byte {
	return appendQuoted(b, s, false)
}

// appendQuoted is appendString; with html, '<', '>' and '&' also go
// through encoding/json, which escapes them in a payload it marshals.
func appendQuoted[S string | []byte](b []byte, s S, html bool) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			q, _ := json.Marshal(string(s))
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Ack is the payload of an ack.
type Ack struct {
	AcknowledgedMessageID string `json:"acknowledgedMessageId"`
	Duplicate             bool   `json:"duplicate,omitempty"`
}

// AppendAck appends the ack of the message id to b: byte for byte what
// Encode(TypeAck, <new id>, sessionID, now, Ack{id, dup}) returns, without
// encoding/json and, for ids that need no escaping, without allocating.
// The reader acks every engine message (issue #24: the ack cost 17
// allocations a chunk).
func AppendAck[S string | []byte](b []byte, id S, dup bool, sessionID string, now time.Time) []byte {
	b = append(b, `{"protocol":"`+Protocol+`","protocolVersion":3,"type":"`+TypeAck+`","messageId":"`...)
	b = AppendID(b)
	b = append(b, '"')
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = appendString(b, sessionID)
	}
	b = append(b, `,"timestamp":"`...)
	b = now.UTC().AppendFormat(b, timestampLayout)
	b = append(b, `","acknowledgedMessageId":`...)
	b = appendQuoted(b, id, true) // as json.Marshal of the payload does
	if dup {
		b = append(b, `,"duplicate":true`...)
	}
	return append(b, '}')
}

// Window remembers the last N message ids to detect duplicates. It keeps
// a fixed-size digest of each id, never the id itself, so its memory is
// the same whatever the ids' length (issue #16: 60 messages with a 4 MiB
// messageId kept 240 MiB alive). It is a passive value, not safe for
// concurrent use.
//
// The digest is 128 bits of hash/maphash under two seeds chosen at random
// per window, which a peer cannot know: the chance that a new id is taken
// for a duplicate is about N/2^128 per message.
type Window struct {
	seeds [2]maphash.Seed
	seen  map[digest]struct{}
	ring  []digest
	next  int // where the next id goes in ring
	n     int // ids in ring
}

// digest is what a Window remembers of one id.
type digest [2]uint64

// NewWindow returns a window remembering n ids (n >= 1).
func NewWindow(n int) *Window {
	if n < 1 {
		n = 1
	}
	return &Window{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		seen: make(map[digest]struct{}, n), ring: make([]digest, n)}
}

// Seen records id and reports whether it was already in the window. The
// oldest id is forgotten when the window is full. Seen keeps no reference
// to id.
func (w *Window) Seen(id string) bool {
	return w.seen1(digest{maphash.String(w.seeds[0], id), maphash.String(w.seeds[1], id)})
}

// SeenBytes is Seen of string(id), without the string.
func (w *Window) SeenBytes(id []byte) bool {
	return w.seen1(digest{maphash.Bytes(w.seeds[0], id), maphash.Bytes(w.seeds[1], id)})
}

func (w *Window) seen1(d digest) bool {
	if _, ok := w.seen[d]; ok {
		return true
	}
	if w.n == len(w.ring) {
		delete(w.seen, w.ring[w.next])
	} else {
		w.n++
	}
	w.ring[w.next] = d
	w.next = (w.next + 1) % len(w.ring)
	w.seen[d] = struct{}{}
	return false
}

// Len reports how many ids the window holds.
func (w *Window) Len() int { return len(w.seen) }
