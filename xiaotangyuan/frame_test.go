package xiaotangyuan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

var frameTable = []struct {
	name string
	in   string
	kind frameKind // 0: invalid
}{
	{"ready", `{"jsonrpc":"2.0","method":"gateway.ready","params":{"protocolVersion":"1.1","capabilities":["assistant.text-stream"]}}`, kindNotification},
	{"delta float elapsed", `{"jsonrpc":"2.0","method":"assistant.text.delta","params":{"interactionId":"i","delta":"你好","text":"你好","elapsedMs":31.304737999999816,"source":"chat"}}`, kindNotification},
	{"atom request uuid id", `{"jsonrpc":"2.0","id":"6f1c2b9e-0000-4000-8000-000000000000","method":"game.atom.execute","params":{"atom":"dst.attack_butterfly","arguments":{"targetId":"x"}}}`, kindRequest},
	{"request id null", `{"jsonrpc":"2.0","id":null,"method":"game.atom.execute","params":{}}`, kindRequest},
	{"result", `{"jsonrpc":"2.0","id":7,"result":{"pong":true}}`, kindResponse},
	{"null result", `{"jsonrpc":"2.0","id":7,"result":null}`, kindResponse},
	{"error id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"method must be a non-empty string"}}`, kindResponse},
	{"leading space", " \n{\"jsonrpc\":\"2.0\",\"method\":\"assistant.error\",\"params\":{\"message\":\"m\"}}", kindNotification},
	{"batch", `[{"jsonrpc":"2.0","method":"gateway.ready"}]`, 0},
	{"not json", `hello`, 0},
	{"truncated", `{"jsonrpc":"2.0","method":`, 0},
	{"wrong version", `{"jsonrpc":"1.0","method":"gateway.ready"}`, 0},
	{"no version", `{"method":"gateway.ready"}`, 0},
	{"object id", `{"jsonrpc":"2.0","id":{},"result":1}`, 0},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, 0},
	{"both result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}`, 0},
	{"neither", `{"jsonrpc":"2.0","id":1}`, 0},
	{"no id no method", `{"jsonrpc":"2.0","result":1}`, 0},
	{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, 0},
	{"method not string", `{"jsonrpc":"2.0","method":5}`, 0},
	{"error code not int", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}`, 0},
	{"empty", ``, 0},
}

func Test_parseFrame(t *testing.T) {
	t.Parallel()
	for _, tc := range frameTable {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, kind, err := parseFrame([]byte(tc.in))
			testutil.Equal(t, "kind", kind, tc.kind)
			if tc.kind == 0 {
				testutil.ErrorIs(t, err, errFrame)
			} else {
				testutil.Success(t, err)
			}
		})
	}
}

func Test_decodeNotification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, params string
		want                 Event
		err                  bool
	}{
		{"ready", "gateway.ready", `{"protocolVersion":"1.1","capabilities":["a"]}`, Event{Kind: EventReady, ProtocolVersion: "1.1", Capabilities: []string{"a"}}, false},
		{"recording", "assistant.status", `{"status":"recording"}`, Event{Kind: EventStatus, Status: StatusRecording}, false},
		{"thinking", "assistant.status", `{"status":"thinking","transcript":"嗨"}`, Event{Kind: EventStatus, Status: StatusThinking, Transcript: "嗨"}, false},
		{"bad status", "assistant.status", `{"status":"sleeping"}`, Event{}, true},
		{"delta", "assistant.text.delta", `{"interactionId":"i","delta":"b","text":"ab","elapsedMs":1.5,"source":"voice"}`,
			Event{Kind: EventText, InteractionID: "i", Source: SourceVoice, Text: "ab", Delta: "b", Elapsed: 1500_000}, false},
		{"legacy delta", "assistant.delta", `{"interactionId":"j","delta":"b","text":"b","elapsedMs":-3}`,
			Event{Kind: EventText, InteractionID: "j", Text: "b", Delta: "b"}, false},
		{"delta without text", "assistant.text.delta", `{"interactionId":"i","delta":"b"}`, Event{}, true},
		{"start without id", "assistant.text.start", `{"source":"chat"}`, Event{}, true},
		{"id of 256 bytes", "assistant.text.start", `{"interactionId":"` + strings.Repeat("i", 256) + `"}`, Event{Kind: EventStart, InteractionID: strings.Repeat("i", 256)}, false},
		// Issue #31: the ids remembered are bounded in bytes too.
		{"id of 257 bytes", "assistant.text.done", `{"interactionId":"` + strings.Repeat("i", 257) + `","text":""}`, Event{}, true},
		{"present", "assistant.present", `{"text":"t","source":"proactive"}`, Event{Kind: EventPresent, Text: "t", Source: SourceProactive}, false},
		{"error", "assistant.error", `{"message":"m"}`, Event{Kind: EventError, Message: "m"}, false},
		{"cancel", "assistant.text.cancel", `{"reason":"barge-in"}`, Event{Kind: EventCancel, Reason: "barge-in"}, false},
		{"params not object", "assistant.error", `[1]`, Event{}, true},
		{"unknown", "assistant.mood", `{}`, Event{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var a Assembler
			ev, err := decodeNotification(&a, tc.method, json.RawMessage(tc.params))
			if tc.err {
				testutil.Error(t, err)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "event", ev, tc.want)
		})
	}
}

// FuzzIncoming feeds arbitrary frames through the reader's decoding path:
// classification, then notification assembly. Nothing may panic, and a
// frame accepted as a given kind has that kind's shape.
func FuzzIncoming(f *testing.F) {
	for _, tc := range frameTable {
		f.Add([]byte(tc.in))
	}
	var a Assembler
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, kind, err := parseFrame(b)
		if err != nil {
			if !errors.Is(err, errFrame) {
				t.Fatalf("error %v does not wrap errFrame", err)
			}
			return
		}
		switch kind {
		case kindRequest:
			if fr.Method == "" || fr.ID == nil {
				t.Fatalf("request without method or id: %s", b)
			}
		case kindNotification:
			if fr.Method == "" || fr.ID != nil {
				t.Fatalf("bad notification: %s", b)
			}
			ev, err := decodeNotification(&a, fr.Method, fr.Params)
			if err == nil && ev.Kind == 0 {
				t.Fatalf("event without kind from %s", b)
			}
		case kindResponse:
			if fr.ID == nil || (fr.Result == nil) == (fr.Error == nil) {
				t.Fatalf("bad response: %s", b)
			}
			clientID(fr.ID)
		default:
			t.Fatalf("no kind and no error for %s", b)
		}
	})
}

// What the client and the fake encode, the client parses.
func Test_parseFrameRoundTrip(t *testing.T) {
	t.Parallel()
	req, err := wire.AppendRequest(nil, 3, wire.MethodChat, wire.Chat{Text: "hi"})
	testutil.Success(t, err)
	note, err := wire.EncodeRequest(nil, wire.NoteTextDone, wire.TextDone{InteractionID: "i", Text: "t", Source: "chat"})
	testutil.Success(t, err)
	resp, err := wire.EncodeResponse(json.RawMessage("3"), wire.Pong{Pong: true}, nil)
	testutil.Success(t, err)
	for _, tc := range []struct {
		b    []byte
		kind frameKind
	}{{req, kindRequest}, {note, kindNotification}, {resp, kindResponse}} {
		_, kind, err := parseFrame(tc.b)
		testutil.Success(t, err)
		testutil.Equal(t, string(tc.b), kind, tc.kind)
	}
}

func Test_checkSize(t *testing.T) {
	t.Parallel()
	testutil.Success(t, checkSize(make([]byte, MaxMessageSize)))
	err := checkSize(make([]byte, MaxMessageSize+1))
	testutil.ErrorIs(t, err, ErrMessageTooBig)
	// No method: the operation that fails names it once (issue #20).
	testutil.Equal(t, "text", err.Error(), "xiaotangyuan: message too big: 1048577 bytes, limit 1048576")
}

func BenchmarkParseDelta(b *testing.B) {
	msg := []byte(frameTable[1].in)
	var a Assembler
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		f, _, err := parseFrame(msg)
		if err != nil {
			b.Fatal(err)
		}
		a.Reset()
		if _, err := decodeNotification(&a, f.Method, f.Params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDeltaReference decodes the same frame into a generic map,
// the naive baseline BenchmarkParseDelta is compared with.
func BenchmarkParseDeltaReference(b *testing.B) {
	msg := []byte(frameTable[1].in)
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(msg, &m); err != nil {
			b.Fatal(err)
		}
	}
}
