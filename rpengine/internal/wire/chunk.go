package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// ErrNotAudioChunk is wrapped by [ChunkDecoder.Decode] when the message is
// a valid envelope of another type: the caller decodes it the usual way.
var ErrNotAudioChunk = errors.New("not a reply.audio.chunk message")

// ChunkEnvelope is the envelope of a message decoded by
// [ChunkDecoder.Decode]. Its slices alias the message text.
type ChunkEnvelope struct {
	MessageID []byte
	SessionID []byte // nil when absent or null
	Timestamp []byte
}

// ChunkDecoder decodes the raw text of reply.audio.chunk messages (a flat
// envelope, docs/rpengine-protocol.md "Envelope" and "Engine to game")
// into [AudioChunk] without allocating, for the reader of a connection: a
// 32 KiB chunk is about 44 KB of JSON, almost all of it base64, and
// encoding/json spends most of its time copying and checking that string.
// Its result is exactly what encoding/json gives for the same text (a
// differential fuzz target checks it): messages the fast scanner does not
// handle (escapes in strings, nested unknown values, case-folded or
// non-ASCII keys, malformed JSON) are decoded with encoding/json instead.
// The envelope is checked by the rules DecodeHeader applies (checkEnvelope).
//
// A ChunkDecoder is not safe for concurrent use; the zero value is ready.
// It remembers the last requestId so that the chunks of one reply share
// one string.
type ChunkDecoder struct {
	requestID string
}

// chunkFields is what a chunk message decodes to: the envelope plus the
// payload. The JSON tags make encoding/json the reference decoder.
type chunkFields struct {
	Protocol        string          `json:"protocol"`
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
	Type            string          `json:"type"`
	MessageID       string          `json:"messageId"`
	SessionID       *string         `json:"sessionId"`
	Timestamp       string          `json:"timestamp"`
	AudioChunk
}

// Decode decodes msg, the text of one engine message, into c, and returns
// its envelope. It checks the envelope as DecodeHeader does. A valid
// envelope of another type returns an error wrapping [ErrNotAudioChunk];
// anything else wrong returns DecodeHeader's error for it, and c is then
// unchanged.
//
// c.Data and the envelope's slices alias msg: msg must not be modified
// while they are in use. The stream assembler keeps no reference to them,
// so a reader can reuse its message buffer once it was pushed.
// c.RequestID is a string of its own.
func (d *ChunkDecoder) Decode(c *AudioChunk, msg []byte) (ChunkEnvelope, error) {
	var f rawFields
	if len(msg) > MaxMessageBytes || !f.scan(msg) {
		return d.decodeSlow(c, msg)
	}
	if err := checkEnvelope(f.protocol, f.version, f.typ, f.messageID, f.timestamp); err != nil {
		return ChunkEnvelope{}, err
	}
	if string(f.typ) != TypeAudioChunk {
		return ChunkEnvelope{}, fmt.Errorf("%w: type %s", ErrNotAudioChunk, peertext.Quote(string(f.typ), peertext.LogBytes))
	}
	if string(f.requestID) != d.requestID {
		d.requestID = string(f.requestID)
	}
	*c = AudioChunk{RequestID: d.requestID, Sequence: f.ints[0], SegmentSequence: f.ints[1],
		SegmentChunkSequence: f.ints[2], SegmentChunkCount: f.ints[3]}
	if len(f.data) > 0 {
		c.Data = unsafe.String(&f.data[0], len(f.data))
	}
	return ChunkEnvelope{MessageID: f.messageID, SessionID: f.sessionID, Timestamp: f.timestamp}, nil
}

// decodeSlow is the reference path: encoding/json, then the same checks.
func (d *ChunkDecoder) decodeSlow(c *AudioChunk, msg []byte) (ChunkEnvelope, error) {
	if len(msg) > MaxMessageBytes {
		return ChunkEnvelope{}, fmt.Errorf("%w: %d bytes", ErrTooBig, len(msg))
	}
	if t := bytes.TrimLeft(msg, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return ChunkEnvelope{}, ErrNotJSON
	}
	var f chunkFields
	if err := json.Unmarshal(msg, &f); err != nil {
		return ChunkEnvelope{}, fmt.Errorf("%w: %s", ErrNotJSON, peertext.Clip(err.Error(), peertext.LogBytes))
	}
	if err := checkEnvelope(f.Protocol, f.ProtocolVersion, f.Type, f.MessageID, f.Timestamp); err != nil {
		return ChunkEnvelope{}, err
	}
	if f.Type != TypeAudioChunk {
		return ChunkEnvelope{}, fmt.Errorf("%w: type %s", ErrNotAudioChunk, peertext.Quote(f.Type, peertext.LogBytes))
	}
	d.requestID = f.RequestID
	*c = f.AudioChunk
	env := ChunkEnvelope{MessageID: []byte(f.MessageID), Timestamp: []byte(f.Timestamp)}
	if f.SessionID != nil {
		env.SessionID = []byte(*f.SessionID)
	}
	return env, nil
}

// rawFields is the fast scanner's result: views into the message.
type rawFields struct {
	protocol, version, typ, messageID, sessionID, timestamp []byte
	requestID, data                                         []byte
	ints                                                    [4]int // sequence, segmentSequence, segmentChunkSequence, segmentChunkCount
}

// Field indexes of the fast scanner.
const (
	fieldUnknown = iota
	fieldProtocol
	fieldVersion
	fieldType
	fieldMessageID
	fieldSessionID
	fieldTimestamp
	fieldRequestID
	fieldData
	fieldSequence // the four int fields follow in rawFields.ints order
)

// chunkKeys are the JSON names the scanner knows, by field index.
var chunkKeys = [...]string{
	fieldProtocol: "protocol", fieldVersion: "protocolVersion", fieldType: "type",
	fieldMessageID: "messageId", fieldSessionID: "sessionId", fieldTimestamp: "timestamp",
	fieldRequestID: "requestId", fieldData: "data", fieldSequence: "sequence",
	fieldSequence + 1: "segmentSequence", fieldSequence + 2: "segmentChunkSequence",
	fieldSequence + 3: "segmentChunkCount",
}

// scan parses msg when it has the plain shape engines send: one flat
// object, strings without escapes, integers. It returns false for anything
// else, which the caller hands to encoding/json, so scan never needs to
// produce an error and only accepts what encoding/json decodes the same
// way (duplicate keys: the last wins; null leaves a field unchanged).
func (f *rawFields) scan(msg []byte) bool {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return false
	}
	i = skipSpace(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return skipSpace(msg, i+1) == len(msg)
	}
	for {
		key, j, ok, plain := scanString(msg, i)
		if !ok || (!plain && hasControl(key)) {
			return false
		}
		field, ok := lookupKey(key)
		if !ok {
			return false
		}
		if i = skipSpace(msg, j); i >= len(msg) || msg[i] != ':' {
			return false
		}
		if i, ok = f.value(msg, skipSpace(msg, i+1), field); !ok {
			return false
		}
		if i = skipSpace(msg, i); i >= len(msg) {
			return false
		}
		switch msg[i] {
		case ',':
			i = skipSpace(msg, i+1)
		case '}':
			return skipSpace(msg, i+1) == len(msg)
		default:
			return false
		}
	}
}

// value scans the value at msg[i:] for field and returns the index after it.
func (f *rawFields) value(msg []byte, i, field int) (int, bool) {
	if i >= len(msg) {
		return 0, false
	}
	if msg[i] == 'n' { // null: encoding/json leaves the field as it is
		if !bytes.HasPrefix(msg[i:], []byte("null")) {
			return 0, false
		}
		if field == fieldVersion { // RawMessage keeps "null" as its text
			f.version = msg[i : i+4]
		}
		if field == fieldSessionID {
			f.sessionID = nil
		}
		return i + 4, true
	}
	switch field {
	case fieldUnknown:
		return skipScalar(msg, i)
	case fieldVersion:
		end, ok := scanNumber(msg, i)
		if ok {
			f.version = msg[i:end]
		}
		return end, ok
	case fieldProtocol, fieldType, fieldMessageID, fieldSessionID, fieldTimestamp, fieldRequestID, fieldData:
		s, end, ok, plain := scanString(msg, i)
		if !ok || (!plain && !validText(s)) {
			return 0, false
		}
		*f.stringField(field) = s
		return end, true
	default:
		n, end, ok := scanInt(msg, i)
		if ok {
			f.ints[field-fieldSequence] = n
		}
		return end, ok
	}
}

func (f *rawFields) stringField(field int) *[]byte {
	switch field {
	case fieldProtocol:
		return &f.protocol
	case fieldType:
		return &f.typ
	case fieldMessageID:
		return &f.messageID
	case fieldSessionID:
		return &f.sessionID
	case fieldTimestamp:
		return &f.timestamp
	case fieldRequestID:
		return &f.requestID
	default:
		return &f.data
	}
}

// lookupKey returns the field of a key. ok is false for a key that
// encoding/json might match case-insensitively to a known one (or that is
// not ASCII, where its folding rules are wider): the slow path decides.
func lookupKey(key []byte) (field int, ok bool) {
	for k, name := range chunkKeys {
		if name != "" && string(key) == name {
			return k, true
		}
	}
	for _, b := range key {
		if b >= utf8.RuneSelf {
			return 0, false
		}
	}
	for _, name := range chunkKeys {
		if len(name) == len(key) && bytes.EqualFold(key, []byte(name)) {
			return 0, false
		}
	}
	return fieldUnknown, true
}

func skipSpace(msg []byte, i int) int {
	for i < len(msg) {
		switch msg[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the contents of the string at msg[i:] and the index
// after its closing quote. ok is false when there is no string there or it
// holds an escape (the slow path unescapes). plain reports contents that
// are all printable ASCII, which need no further check: one pass finds
// the end of such a string and checks it (see plainLen).
func scanString(msg []byte, i int) (s []byte, end int, ok, plain bool) {
	if i >= len(msg) || msg[i] != '"' {
		return nil, 0, false, false
	}
	n := plainLen(msg[i+1:])
	if j := i + 1 + n; j < len(msg) && msg[j] == '"' {
		return msg[i+1 : j], j + 1, true, true
	}
	n = bytes.IndexByte(msg[i+1:], '"')
	if n < 0 {
		return nil, 0, false, false
	}
	s = msg[i+1 : i+1+n]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, 0, false, false
	}
	return s, i + 2 + n, true, false
}

// validText reports whether s is a string encoding/json would decode as
// is: no control characters and valid UTF-8 (encoding/json replaces
// invalid bytes). The common all-ASCII case is checked 8 bytes at a time.
func validText(s []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w0 := binary.LittleEndian.Uint64(s[i:])
		w1 := binary.LittleEndian.Uint64(s[i+8:])
		w2 := binary.LittleEndian.Uint64(s[i+16:])
		w3 := binary.LittleEndian.Uint64(s[i+24:])
		// A byte below 0x20 borrows into its top bit; one above 0x7f has it.
		if ((w0-lo)|w0|(w1-lo)|w1|(w2-lo)|w2|(w3-lo)|w3)&hi != 0 {
			return slowText(s)
		}
	}
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if ((w-lo)|w)&hi != 0 {
			return slowText(s)
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= utf8.RuneSelf {
			return slowText(s)
		}
	}
	return true
}

func slowText(s []byte) bool {
	for _, b := range s {
		if b < 0x20 {
			return false
		}
	}
	return utf8.Valid(s)
}

// skipScalar skips the value of an unknown key: a string without escapes,
// a number, true or false. Other values go to the slow path.
func skipScalar(msg []byte, i int) (int, bool) {
	switch msg[i] {
	case '"':
		s, end, ok, plain := scanString(msg, i)
		return end, ok && (plain || !hasControl(s))
	case 't':
		return i + 4, bytes.HasPrefix(msg[i:], []byte("true"))
	case 'f':
		return i + 5, bytes.HasPrefix(msg[i:], []byte("false"))
	default:
		return scanNumber(msg, i)
	}
}

func hasControl(s []byte) bool {
	for _, b := range s {
		if b < 0x20 {
			return true
		}
	}
	return false
}

// scanNumber checks the JSON number grammar (RFC 8259 section 6) at msg[i:].
func scanNumber(msg []byte, i int) (int, bool) {
	if i < len(msg) && msg[i] == '-' {
		i++
	}
	switch {
	case i < len(msg) && msg[i] == '0':
		i++
	case i < len(msg) && msg[i] >= '1' && msg[i] <= '9':
		i = skipDigits(msg, i)
	default:
		return 0, false
	}
	if i < len(msg) && msg[i] == '.' {
		j := skipDigits(msg, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(msg) && (msg[i] == 'e' || msg[i] == 'E') {
		i++
		if i < len(msg) && (msg[i] == '+' || msg[i] == '-') {
			i++
		}
		j := skipDigits(msg, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(msg []byte, i int) int {
	for i < len(msg) && msg[i] >= '0' && msg[i] <= '9' {
		i++
	}
	return i
}

// scanInt parses a plain integer of at most 18 digits (no fraction or
// exponent, which encoding/json refuses for an int field, and no overflow).
func scanInt(msg []byte, i int) (n, end int, ok bool) {
	neg := i < len(msg) && msg[i] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(msg) && msg[i] >= '0' && msg[i] <= '9' {
		n = n*10 + int(msg[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && msg[start] == '0') {
		return 0, 0, false
	}
	if i < len(msg) && (msg[i] == '.' || msg[i] == 'e' || msg[i] == 'E') {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}
