package neuro

import (
	"errors"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

var incomingTests = []struct {
	name    string
	in      string
	want    any
	wantErr bool
}{
	{"action with data", `{"command":"action","data":{"id":"1","name":"play","data":"{\"x\":1}"}}`,
		&actionMsg{ID: "1", Name: "play", Data: `{"x":1}`, HasData: true}, false},
	{"action without data (Randy)", `{"command":"action","data":{"id":"2","name":"pass"}}`,
		&actionMsg{ID: "2", Name: "pass"}, false},
	{"action null data", `{"command":"action","data":{"id":"2","name":"pass","data":null}}`,
		&actionMsg{ID: "2", Name: "pass"}, false},
	{"action object data kept verbatim", `{"command":"action","data":{"id":"3","name":"p","data":{"x":1}}}`,
		&actionMsg{ID: "3", Name: "p", Data: `{"x":1}`, HasData: true}, false},
	{"action missing name keeps id", `{"command":"action","data":{"id":"4"}}`, &actionMsg{ID: "4"}, true},
	{"action missing id", `{"command":"action","data":{"name":"x"}}`, nil, true},
	{"startup ack", `{"command":"startup","data":{"session":{"sessionId":"s","characterId":"evil","displayName":"Evil Neuro"}}}`,
		StartupAck{SessionID: "s", CharacterID: "evil", DisplayName: "Evil Neuro"}, false},
	// Issue #33: without displayName the character is named by its id.
	{"startup ack without displayName", `{"command":"startup","data":{"session":{"sessionId":"s","characterId":"neuro"}}}`,
		StartupAck{SessionID: "s", CharacterID: "neuro", DisplayName: "neuro"}, false},
	{"startup ack with empty displayName", `{"command":"startup","data":{"session":{"sessionId":"s","characterId":"evil","displayName":""}}}`,
		StartupAck{SessionID: "s", CharacterID: "evil", DisplayName: "evil"}, false},
	{"speech finished", `{"command":"speech_finished","data":{"isFinal":false}}`, SpeechFinished{}, false},
	{"speech finished needs isFinal", `{"command":"speech_finished","data":{}}`, nil, true},
	{"reregister all", `{"command":"actions/reregister_all"}`, ReregisterAll{}, false},
	{"graceful", `{"command":"shutdown/graceful","data":{"wants_shutdown":true}}`, ShutdownGraceful{WantsShutdown: true}, false},
	{"immediate with {}", `{"command":"shutdown/immediate","data":{}}`, ShutdownImmediate{}, false},
	{"unknown command ignored", `{"command":"neuro-relay/x","data":{}}`, nil, false},
	{"not json", `{"command":`, nil, true},
	{"array", `[]`, nil, true},
	{"no command", `{"data":{}}`, nil, true},
	{"data wrong type", `{"command":"shutdown/graceful","data":{"wants_shutdown":"yes"}}`, nil, true},
}

func Test_parseIncoming(t *testing.T) {
	t.Parallel()
	for _, tt := range incomingTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseIncoming([]byte(tt.in))
			if tt.wantErr {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *ProtocolError", err)
				}
			} else {
				testutil.Success(t, err)
			}
			if a, ok := tt.want.(*actionMsg); ok {
				g, ok := got.(*actionMsg)
				if !ok || *g != *a {
					t.Fatalf("got %#v, want %#v", got, a)
				}
				return
			}
			testutil.Equal(t, "value", got, tt.want)
		})
	}
}

func Test_encodeOut(t *testing.T) {
	t.Parallel()
	b, err := encodeOut("Tic Tac Toe", cmdStartup, nil)
	testutil.Success(t, err)
	testutil.Equal(t, "startup", string(b), `{"command":"startup","game":"Tic Tac Toe"}`)
	b, err = encodeOut("G", cmdForce, forceData{Query: "q", ActionNames: []string{"a"}, Priority: PriorityCritical.String()})
	testutil.Success(t, err)
	testutil.Equal(t, "force", string(b), `{"command":"actions/force","game":"G","data":{"query":"q","priority":"critical","action_names":["a"]}}`)
}

func TestPriority_String(t *testing.T) {
	t.Parallel()
	for p, want := range map[Priority]string{PriorityLow: "low", PriorityMedium: "medium", PriorityHigh: "high", PriorityCritical: "critical", 9: "Priority(9)"} {
		testutil.Equal(t, "priority", p.String(), want)
	}
}
