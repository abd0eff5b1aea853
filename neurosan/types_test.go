package neurosan_test

import (
	"encoding/json"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
)

func TestMessageType_UnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     neurosan.MessageType
		err      bool
	}{
		{"name", `"AGENT_FRAMEWORK"`, neurosan.TypeAgentFramework, false},
		{"unknown name passes through", `"AGENT_SOMETHING_NEW"`, "AGENT_SOMETHING_NEW", false},
		{"the enum's name for 0", `"UNKNOWN_MESSAGE_TYPE"`, neurosan.TypeUnknown, false}, // Issue #25
		{"the OpenAPI name for 0", `"UNKNOWN"`, neurosan.TypeUnknown, false},
		{"zero", `0`, neurosan.TypeUnknown, false},
		{"number", `101`, neurosan.TypeAgentFramework, false},
		{"human number", `2`, neurosan.TypeHuman, false},
		{"progress number", `104`, neurosan.TypeAgentProgress, false},
		{"unknown number", `105`, "105", false},
		{"null", `null`, "", false},
		{"bool", `true`, "", true},
		{"float", `1.5`, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got neurosan.MessageType
			err := json.Unmarshal([]byte(tc.in), &got)
			if tc.err {
				testutil.Error(t, err)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "type", got, tc.want)
		})
	}
}

func TestChatMessage_unknownFieldsKept(t *testing.T) {
	t.Parallel()
	in := `{"type":"AI","text":"t","origin":[{"tool":"a","instantiation_index":2}],"structure":{"k":1},` +
		`"sly_data":{"id":"x"},"content_blocks":{"format":"langchain_v1","blocks":[]},"future_field":[1,2],"other":"<&>"}`
	var m neurosan.ChatMessage
	testutil.Success(t, json.Unmarshal([]byte(in), &m))
	testutil.Equal(t, "origin", m.Origin, []neurosan.Origin{{Tool: "a", InstantiationIndex: 2}})
	testutil.Equal(t, "extra", string(m.Extra["future_field"]), `[1,2]`)
	testutil.Equal(t, "content blocks", string(m.ContentBlocks), `{"format":"langchain_v1","blocks":[]}`)
	out, err := m.MarshalJSON() // json.Marshal would also escape <&> in "other"
	testutil.Success(t, err)
	var back neurosan.ChatMessage
	testutil.Success(t, json.Unmarshal(out, &back))
	testutil.Equal(t, "round trip", back, m)
}

func TestChatMessage_nullIsAbsent(t *testing.T) {
	t.Parallel()
	var m neurosan.ChatMessage
	testutil.Success(t, json.Unmarshal([]byte(`{"type":"AI","structure":null,"chat_context":null,"sly_data":null,"x":null}`), &m))
	testutil.Equal(t, "message", m, neurosan.ChatMessage{Type: neurosan.TypeAI})
}

func TestChatMessage_Progress(t *testing.T) {
	t.Parallel()
	m := neurosan.ChatMessage{Type: neurosan.TypeAgentProgress, Structure: json.RawMessage(`{"progress":0.25}`)}
	p, ok := m.Progress()
	testutil.Equal(t, "ok", ok, true)
	testutil.Equal(t, "progress", p, 0.25)
	m.Type = neurosan.TypeAI
	_, ok = m.Progress()
	testutil.Equal(t, "not progress", ok, false)
}

func TestChatRequest_AppendJSON(t *testing.T) {
	t.Parallel()
	ctx := json.RawMessage(`{"chat_histories": [ {"x": 1.0e2, "s": "<&>"} ]}`)
	tests := []struct {
		name string
		req  neurosan.ChatRequest
		want string
	}{
		{"empty", neurosan.ChatRequest{}, `{}`},
		{"text", neurosan.ChatRequest{Text: "hi <b>"}, `{"user_message":{"type":"HUMAN","text":"hi <b>"}}`},
		{"minimal omitted", neurosan.ChatRequest{Text: "a", Filter: neurosan.FilterMinimal}, `{"user_message":{"type":"HUMAN","text":"a"}}`},
		{"maximal", neurosan.ChatRequest{Filter: neurosan.FilterMaximal}, `{"chat_filter":{"chat_filter_type":"MAXIMAL"}}`},
		{"context verbatim", neurosan.ChatRequest{ChatContext: ctx}, `{"chat_context":` + string(ctx) + `}`},
		{"sly data sorted", neurosan.ChatRequest{SlyData: map[string]json.RawMessage{"y": json.RawMessage(`2`), "x": json.RawMessage(`1`)}}, `{"sly_data":{"x":1,"y":2}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.req.AppendJSON(nil)
			testutil.Success(t, err)
			testutil.Equal(t, "json", string(got), tc.want)
		})
	}
	_, err := (&neurosan.ChatRequest{ChatContext: json.RawMessage(`{broken`)}).AppendJSON(nil)
	testutil.Error(t, err)
}
