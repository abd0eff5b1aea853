package wire

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestAppendRequest(t *testing.T) {
	t.Parallel()
	b, err := AppendRequest(nil, 3, MethodChat, Chat{Text: "hi"})
	testutil.Success(t, err)
	testutil.Equal(t, "request", string(b), `{"jsonrpc":"2.0","id":3,"method":"chat.send","params":{"text":"hi"}}`)
	b, err = AppendRequest(b[:0], 0, MethodState, nil)
	testutil.Success(t, err)
	testutil.Equal(t, "notification", string(b), `{"jsonrpc":"2.0","method":"state.update"}`)
	_, err = AppendRequest(nil, 1, "x", func() {})
	testutil.Error(t, err)
}

func TestEncodeRequest(t *testing.T) {
	t.Parallel()
	b, err := EncodeRequest(json.RawMessage(`"6f1c"`), MethodAtom, Atom{Atom: "dst.attack", Arguments: json.RawMessage(`{"n":1}`)})
	testutil.Success(t, err)
	testutil.Equal(t, "uuid id kept", string(b), `{"jsonrpc":"2.0","id":"6f1c","method":"game.atom.execute","params":{"atom":"dst.attack","arguments":{"n":1}}}`)
}

func TestEncodeResponse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		id     json.RawMessage
		result any
		e      *Error
		want   string
	}{
		{"result", json.RawMessage(`"a-b"`), Pong{Pong: true}, nil, `{"jsonrpc":"2.0","id":"a-b","result":{"pong":true}}`},
		{"raw result", json.RawMessage(`7`), json.RawMessage(`{"x":1}`), nil, `{"jsonrpc":"2.0","id":7,"result":{"x":1}}`},
		{"error with absent id", nil, nil, &Error{Code: CodeParse, Message: "bad"}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
		{"nil result", json.RawMessage(`1`), nil, nil, `{"jsonrpc":"2.0","id":1,"result":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := EncodeResponse(tc.id, tc.result, tc.e)
			testutil.Success(t, err)
			testutil.Equal(t, "frame", string(b), tc.want)
		})
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{`"x"`: true, `7`: true, `-1`: true, `null`: true, `nil`: false, `{}`: false, `[]`: false, `true`: false, ``: false} {
		testutil.Equal(t, id, ValidID(json.RawMessage(id)), want)
	}
}

// Trim removes what JavaScript's String.prototype.trim removes, which is
// not what strings.TrimSpace removes. Issue #33.
func TestTrim(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" \t\n\v\f\r a b \u00a0":           "a b",
		"\ufeffid\u3000\u2028\u2029":       "id",
		"\u2000\u200aid\u202f\u205f\u1680": "id",
		"id\u0085":                         "id\u0085",
		"\u200bid":                         "\u200bid", // zero width space is not white space
		"":                                 "",
	} {
		testutil.Equal(t, "Trim("+strconv.Quote(in)+")", Trim(in), want)
	}
}
