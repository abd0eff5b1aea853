package xtytest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf16"
)

var saveIDPattern = regexp.MustCompile(`^[a-zA-Z0-9._:-]{1,128}$`)

type helloParams struct {
	AdapterID       string   `json:"adapterId"`
	GameID          string   `json:"gameId"`
	Version         string   `json:"version"`
	ProtocolVersion string   `json:"protocolVersion"`
	ProcessID       *float64 `json:"processId"`
	SaveID          *string  `json:"saveId"`
	Capabilities    []string `json:"capabilities"`
}

// parseHello applies the gateway's hello validation. protocolVersion is
// required but its value is not checked, as upstream.
func parseHello(params json.RawMessage) (*helloParams, error) {
	var p helloParams
	if err := json.Unmarshal(params, &p); err != nil || !isObject(params) {
		return nil, errors.New("adapter.hello params must be an object with string fields")
	}
	for _, f := range []struct{ name, v string }{{"adapterId", p.AdapterID}, {"gameId", p.GameID}, {"version", p.Version}, {"protocolVersion", p.ProtocolVersion}} {
		if strings.TrimSpace(f.v) == "" {
			return nil, fmt.Errorf("adapter.hello.%s must be a non-empty string", f.name)
		}
	}
	if p.ProcessID != nil {
		if n := *p.ProcessID; n <= 0 || n != math.Trunc(n) || n > 1<<53-1 {
			return nil, errors.New("adapter.hello.processId must be a positive safe integer")
		}
	}
	if p.SaveID != nil {
		if err := checkSaveID("adapter.hello.saveId", strings.TrimSpace(*p.SaveID)); err != nil {
			return nil, err
		}
	}
	return &p, nil
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
	var p struct {
		Text    *string         `json:"text"`
		Context json.RawMessage `json:"context"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil, errors.New("params must be an object")
	}
	out := &chatParams{}
	if !retry {
		if p.Text == nil || strings.TrimSpace(*p.Text) == "" {
			return nil, errors.New("text must be a non-empty string")
		}
		out.Text = strings.TrimSpace(*p.Text)
	}
	if p.Context != nil && string(p.Context) != "null" {
		cc, err := parseContext(p.Context)
		if err != nil {
			return nil, err
		}
		out.Context = cc
	}
	return out, nil
}

func parseContext(raw json.RawMessage) (*chatContext, error) {
	var c map[string]json.RawMessage
	if json.Unmarshal(raw, &c) != nil {
		return nil, errors.New("context must be an object")
	}
	cc := &chatContext{raw: raw}
	for _, k := range []string{"roleInstructions", "playerName", "location", "date", "time", "nearbyNpc", "saveId"} {
		v, ok := c[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, fmt.Errorf("context.%s must be a string", k)
		}
		s = strings.TrimSpace(s)
		switch k {
		case "roleInstructions":
			if len(utf16.Encode([]rune(s))) > 2000 {
				return nil, errors.New("context.roleInstructions must be at most 2000 characters")
			}
		case "saveId":
			if s != "" {
				if err := checkSaveID("context.saveId", s); err != nil {
					return nil, err
				}
				cc.SaveID = s
			}
		}
	}
	if v, ok := c["observation"]; ok && !isObject(v) {
		return nil, errors.New("context.observation must be an object")
	}
	return cc, nil
}

func checkSaveID(field, s string) error {
	if !saveIDPattern.MatchString(s) {
		return fmt.Errorf("%s must be 1-128 characters of letters, digits, '.', '_', ':' or '-'", field)
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &m) == nil
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
