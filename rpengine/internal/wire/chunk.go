package wire

import (
	"bytes"
	"encoding/base64"
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
	// Checked says that the fast scanner took the message and so checked
	// every byte of it: it is valid UTF-8 (a reader need not check again).
	Checked bool
}

// ChunkDecoder decodes the raw text of reply.audio.chunk messages (a flat
// envelope, docs/rpengine-protocol.md "Envelope" and "Engine to game")
// into [AudioChunk] without allocating, for the stream assembler: a
// 32 KiB chunk is about 44 KB of JSON, almost all of it base64, and
// encoding/json spends most of its time copying and checking that string.
// Its result is exactly what encoding/json gives for the same text (a
// differential fuzz target checks it): messages the fast scanner does not
// handle (escapes in strings, nested unknown values, case-folded or
// non-ASCII keys, malformed JSON) are decoded with encoding/json instead.
// The envelope is checked by the rules DecodeHeader applies (checkEnvelope).
//
// With AVX2, the fast scanner also decodes the data (base64.go) in the
// pass that finds its end, into a buffer that Lend provides (the place of
// the samples in their segment) or into a scratch buffer of its own; see
// [ChunkDecoder.PCM].
//
// A ChunkDecoder is not safe for concurrent use; the zero value is ready.
// It remembers the last requestId so that the chunks of one reply share
// one string.
type ChunkDecoder struct {
	// Lend, when not nil, is asked where to decode the data of a chunk,
	// with the chunk's fields decoded so far (all of them when data is
	// the last member, as engines send it) and the data's decoded size n
	// if data is the last member. It returns nil, or a buffer of at
	// least n bytes that Decode may overwrite whole (PCM then returns the
	// start of it). The head is only valid during the call.
	Lend func(h *ChunkHead, n int) []byte

	requestID string
	head      ChunkHead // passed to Lend (a local would escape)
	scratch   []byte    // decoded data when Lend has no place for it
	pcm       []byte    // the last chunk's decoded data (see PCM)
}

// ChunkHead is what [ChunkDecoder.Lend] is told of a chunk. RequestID
// aliases the message.
type ChunkHead struct {
	RequestID                                                          []byte
	Sequence, SegmentSequence, SegmentChunkSequence, SegmentChunkCount int
}

// MaxChunkBytes is the most PCM a reply.audio.chunk carries once decoded:
// 32,768 bytes (docs/rpengine-protocol.md). ChunkDecoder decodes no more;
// a longer data string is left to the caller, who refuses it.
const MaxChunkBytes = 32 << 10

// DecodesData reports whether ChunkDecoder decodes a chunk's data as it
// scans the message (with AVX2) rather than leaving it to the caller.
func DecodesData() bool { return hasAVX2 }

// PCM returns the data of the chunk that the last successful Decode
// decoded, or nil when Decode left it to the caller to decode from
// c.Data (no AVX2, data that is not plain base64 of at most
// MaxChunkBytes, or a message decoded with encoding/json). It is exactly
// what base64.StdEncoding decodes c.Data to, in a buffer Lend returned or
// in the decoder's own, valid until the next Decode.
func (d *ChunkDecoder) PCM() []byte { return d.pcm }

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
	d.pcm = nil
	f := rawFields{d: d}
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
	d.pcm = f.pcm
	return ChunkEnvelope{MessageID: f.messageID, SessionID: f.sessionID, Timestamp: f.timestamp, Checked: true}, nil
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

// rawFields is the fast scanner's result: views into the message, and
// the data decoded when the scanner could (d is the decoder it decodes
// for; nil leaves the data to the caller).
type rawFields struct {
	protocol, version, typ, messageID, sessionID, timestamp []byte
	requestID, data                                         []byte
	ints                                                    [4]int // sequence, segmentSequence, segmentChunkSequence, segmentChunkCount
	d                                                       *ChunkDecoder
	pcm                                                     []byte // data decoded, or nil
	// header: the fields are a Header's (DecodeHeader), whose RequestID
	// is a pointer, which null sets to nil; a chunk's is a string, which
	// null leaves as it is.
	header bool
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
		if field == fieldSessionID || field == fieldRequestID && f.header {
			*f.stringField(field) = nil
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
		if field == fieldData && f.d != nil {
			if end, ok := f.decodeData(msg, i); ok {
				return end, true
			}
			f.pcm = nil // this data is the caller's to decode
		}
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

// decodeData decodes the data string whose opening quote is msg[i] in the
// pass that finds its closing quote, and returns the index after that
// quote. ok is false when it cannot: no AVX2 (two passes with
// encoding/base64's decoder are faster than one with a pure-Go one), a
// byte that is not plain before the closing quote, base64 that
// encoding/base64 refuses, or more than the buffer holds; the caller then
// scans the string as any other and leaves its decoding to the caller of
// Decode, whose encoding/base64 reports what was wrong.
func (f *rawFields) decodeData(msg []byte, i int) (end int, ok bool) {
	if !hasAVX2 || msg[i] != '"' {
		return 0, false
	}
	s := msg[i+1:]
	dst := f.dataBuffer(msg, i)
	if len(dst) > MaxChunkBytes {
		dst = dst[:MaxChunkBytes] // more is the caller's to refuse
	}
	ns, nd := decodeRun(dst, s)
	rest := s[ns:]
	k := plainLen(rest) // the end of the run: padding, then the quote
	if k == len(rest) || rest[k] != '"' {
		return 0, false
	}
	if k > 0 {
		room, tail := dst[nd:], rest[:k]
		if k%4 != 0 || k/4*3 > len(room)+padding(tail) {
			// Not whole groups (encoding/base64 refuses it), or more
			// than fits (the caller refuses it). Whole groups decode
			// to k/4*3 bytes less the padding, or fail before that.
			return 0, false
		}
		m, err := base64.StdEncoding.Decode(room, tail)
		if err != nil {
			return 0, false
		}
		nd += m
	}
	f.data, f.pcm = s[:ns+k], dst[:nd]
	return i + 1 + ns + k + 1, true
}

// dataBuffer returns where decodeData decodes the data string that starts
// at msg[i]: what Lend gives, told the decoded size when the string ends
// the message (as engines send data, last), else the decoder's scratch.
func (f *rawFields) dataBuffer(msg []byte, i int) []byte {
	d := f.d
	if q := lastStringEnd(msg); d.Lend != nil && q > i {
		if n := (q-i-1)/4*3 - padding(msg[i+1:q]); n >= 0 && n <= MaxChunkBytes {
			d.head = ChunkHead{RequestID: f.requestID, Sequence: f.ints[0], SegmentSequence: f.ints[1],
				SegmentChunkSequence: f.ints[2], SegmentChunkCount: f.ints[3]}
			b := d.Lend(&d.head, n)
			d.head.RequestID = nil
			if b != nil && len(b) >= n {
				return b
			}
		}
	}
	if d.scratch == nil {
		d.scratch = make([]byte, MaxChunkBytes)
	}
	return d.scratch
}

// padding counts the '=' that end s, at most two: the bytes that padded
// base64 decodes to are len(s)/4*3 less those.
func padding(s []byte) int {
	n := 0
	for i := len(s) - 1; i >= 0 && n < 2 && s[i] == '='; i-- {
		n++
	}
	return n
}

// lastStringEnd returns the index of the quote that closes a string
// ending msg (followed by '}' and whitespace only), or -1.
func lastStringEnd(msg []byte) int {
	j := len(msg) - 1
	for j >= 0 && isSpace(msg[j]) {
		j--
	}
	if j < 1 || msg[j] != '}' {
		return -1
	}
	for j--; j >= 0 && isSpace(msg[j]); j-- {
	}
	if j < 0 || msg[j] != '"' {
		return -1
	}
	return j
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

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
		return end, ok && (plain || validText(s)) // checked, so that the message is (see ChunkEnvelope.Checked)
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
