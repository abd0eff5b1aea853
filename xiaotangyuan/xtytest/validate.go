package xtytest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"unicode/utf16"

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// The params checks below follow the gateway's reading of a message as a
// JavaScript value (read in its source, see docs/xiaotangyuan-protocol.md, "How
// params are read"): a member that is absent is "not given", but a member
// set to null is given, and null is not an object. Optional strings
// (playerName, saveId and the like) are used only when they are non-blank
// strings, and ignored otherwise, whatever their type.

var opaqueChars = regexp.MustCompile(`^[a-zA-Z0-9._:-]+$`)

// errNotObject is the gateway's answer whenever params, context,
// context.observation or state.update's observation is not a JSON object
// (null, an array, absent where required).
var errNotObject = errors.New("params must be an object")

// object decodes raw as a JSON object, or returns errNotObject.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return nil, errNotObject
	}
	return m, nil
}

// str returns raw as a string when it is a JSON string.
func str(raw json.RawMessage) (string, bool) {
	var s string
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}

// optString is the gateway's optional string: the trimmed value when m[key]
// is a string that is not blank, and nothing otherwise (a number, null or
// "  " alike).
func optString(m map[string]json.RawMessage, key string) (string, bool) {
	s, ok := str(m[key])
	s = wire.Trim(s)
	return s, ok && s != ""
}

// jsLen is JavaScript's string length: UTF-16 code units.
func jsLen(s string) int { return len(utf16.Encode([]rune(s))) }

type helloParams struct {
	GameID       string
	ProcessID    *float64
	SaveID       string // as sent, untrimmed, as the gateway stores it
	Capabilities []string
}

// parseHello applies the gateway's hello validation. protocolVersion is
// required but its value is not checked.
func parseHello(params json.RawMessage) (*helloParams, error) {
	m, err := object(params)
	if err != nil {
		return nil, err
	}
	p := &helloParams{}
	for _, k := range []string{"adapterId", "gameId", "version", "protocolVersion"} {
		s, ok := str(m[k])
		if !ok || wire.Trim(s) == "" {
			return nil, fmt.Errorf("%s must be a non-empty string", k)
		}
		if k == "gameId" {
			p.GameID = s
		}
	}
	if v, ok := m["processId"]; ok { // null is given, and not an integer
		var n float64
		if json.Unmarshal(v, &n) != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) || n <= 0 || n != math.Trunc(n) || n > 1<<53-1 {
			return nil, errors.New("processId must be a positive integer when provided")
		}
		p.ProcessID = &n
	}
	if v, ok := m["capabilities"]; ok {
		if err := json.Unmarshal(v, &p.Capabilities); err != nil || p.Capabilities == nil {
			return nil, errors.New("capabilities must be an array of strings when provided")
		}
	}
	if s, ok := optString(m, "saveId"); ok {
		if !wire.SaveIDPattern.MatchString(s) {
			return nil, errors.New("saveId must contain 1-128 safe opaque identifier characters")
		}
		p.SaveID, _ = str(m["saveId"])
	}
	return p, nil
}

type chatContext struct {
	SaveID string
	raw    json.RawMessage
}

type chatParams struct {
	Text    string
	Context *chatContext
}

// parseChat validates chat.send / chat.retry / assistant.compose params.
func parseChat(params json.RawMessage, retry bool) (*chatParams, error) {
	m, err := object(params)
	if err != nil {
		return nil, err
	}
	out := &chatParams{}
	if !retry {
		s, ok := str(m["text"])
		if !ok || wire.Trim(s) == "" {
			return nil, errors.New("text must be a non-empty string")
		}
		out.Text = wire.Trim(s)
	}
	if v, ok := m["context"]; ok { // context: null is given, and not an object
		cc, err := parseContext(v)
		if err != nil {
			return nil, err
		}
		out.Context = cc
	}
	return out, nil
}

func parseContext(raw json.RawMessage) (*chatContext, error) {
	c, err := object(raw)
	if err != nil {
		return nil, err
	}
	cc := &chatContext{raw: raw}
	if s, ok := optString(c, "roleInstructions"); ok && jsLen(s) > wire.MaxRoleInstructions {
		return nil, fmt.Errorf("roleInstructions must be at most %d characters", wire.MaxRoleInstructions)
	}
	if cc.SaveID, err = opaqueID(c); err != nil {
		return nil, err
	}
	if v, ok := c["observation"]; ok {
		if _, err := object(v); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

// opaqueID reads the optional saveId of a context or state.update: ""
// when it is absent, blank or not a string.
func opaqueID(m map[string]json.RawMessage) (string, error) {
	s, ok := optString(m, "saveId")
	switch {
	case !ok:
		return "", nil
	case jsLen(s) > 128:
		return "", errors.New("saveId must be at most 128 characters")
	case !opaqueChars.MatchString(s):
		return "", errors.New("saveId must contain only safe opaque identifier characters")
	}
	return s, nil
}

// parseState validates state.update params and returns its saveId ("" when
// none was given).
func parseState(params json.RawMessage) (string, error) {
	m, err := object(params)
	if err != nil {
		return "", err
	}
	if _, err := object(m["observation"]); err != nil {
		return "", err
	}
	return opaqueID(m)
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
