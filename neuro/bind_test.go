package neuro_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// TestClient_messagesUseWireNames: with a name prefix, every message to
// Neuro names the action as she knows it: the validation deadline, data
// that does not fit the game's type, data off the schema. Issue #19 item 3.
func TestClient_messagesUseWireNames(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{Prefix: "probe_", ActionTimeout: time.Second})
		slot := neuro.Object(map[string]neuro.Schema{"slot": neuro.Number()}, "slot").JSON()
		testutil.Success(t, e.c.Register(
			neuro.Action{Name: "slow_check", Description: "Check slowly.", Validate: func(ctx context.Context, inv *neuro.Invocation) neuro.Result {
				<-ctx.Done()
				return neuro.OK("")
			}},
			neuro.Action{Name: "typed", Description: "Pick a slot.", Schema: slot,
				Validate: neuro.Bind(func(ctx context.Context, a struct{ Slot int }) neuro.Result { return neuro.OK("") })},
		))
		e.begin(m)
		e.wait("register", func() bool { return len(e.srv.Actions()) > 0 })
		for _, tc := range []struct{ local, data string }{
			{"slow_check", ""},
			{"typed", `{"slot":1.5}`},
			{"typed", `{"slot":"one"}`},
		} {
			n := len(e.srv.Results())
			id := e.srv.SendAction("probe_"+tc.local, tc.data)
			e.wait("result", func() bool { return len(e.srv.Results()) == n+1 })
			r := e.srv.Results()[n]
			testutil.Equal(t, "id", r.ID, id)
			testutil.Equal(t, "success", r.Success, false)
			if !strings.Contains(r.Message, `"probe_`+tc.local+`"`) || strings.Contains(r.Message, `"`+tc.local+`"`) {
				t.Errorf("%s %s: message %q does not name the action as Neuro knows it", tc.local, tc.data, r.Message)
			}
		}
	})
}

// TestBind_integralNumbers: data the schema's "integer" accepts decodes
// into integer fields, whatever way the number is written; data the
// game's type cannot hold is refused with a message about the action,
// never about Go. Issue #19 item 4.
func TestBind_integralNumbers(t *testing.T) {
	type args struct {
		Slot  int     `json:"slot"`
		Small int8    `json:"small"`
		List  []uint8 `json:"list"`
	}
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		var mu sync.Mutex
		var got []args
		e := newEnv(t, so, &neuro.Options{Prefix: "probe_"})
		schema := neuro.Object(map[string]neuro.Schema{
			"slot":  neuro.Integer(),
			"small": neuro.Number(), // looser than int8 on purpose
			"list":  neuro.Array(neuro.Integer()),
		}, "slot").JSON()
		testutil.Success(t, e.c.Register(neuro.Action{Name: "place", Description: "Place.", Schema: schema,
			Validate: neuro.Bind(func(ctx context.Context, a args) neuro.Result {
				mu.Lock()
				got = append(got, a)
				mu.Unlock()
				return neuro.OK("")
			})}))
		e.begin(m)
		e.wait("register", func() bool { return len(e.srv.Actions()) > 0 })
		tests := []struct {
			data string
			want *args    // nil: refused
			msg  []string // in the refusal
		}{
			{`{"slot":1.0}`, &args{Slot: 1}, nil},
			{`{"slot":1e1,"small":-2.00,"list":[0.0,2.5e1]}`, &args{Slot: 10, Small: -2, List: []uint8{0, 25}}, nil},
			{`{"slot":1,"small":1.5}`, nil, []string{`"probe_place"`, "/small", "got number 1.5, expected an integer from -128 to 127"}},
			{`{"slot":1,"small":300}`, nil, []string{"/small", "expected an integer from -128 to 127"}},
			{`{"slot":1,"list":[1,2,-1]}`, nil, []string{"/list/2", "got number -1, expected an integer from 0 to 255"}},
		}
		for _, tt := range tests {
			n := len(e.srv.Results())
			mu.Lock()
			got = nil
			mu.Unlock()
			e.srv.SendAction("probe_place", tt.data)
			e.wait("result", func() bool { return len(e.srv.Results()) == n+1 })
			r := e.srv.Results()[n]
			testutil.Equal(t, tt.data+" success", r.Success, tt.want != nil)
			if tt.want != nil {
				mu.Lock()
				g, _ := json.Marshal(got)
				mu.Unlock()
				w, _ := json.Marshal([]args{*tt.want})
				testutil.Equal(t, tt.data+" decoded", string(g), string(w))
				continue
			}
			for _, s := range tt.msg {
				if !strings.Contains(r.Message, s) {
					t.Errorf("%s: message %q lacks %q", tt.data, r.Message, s)
				}
			}
			for _, goism := range []string{"Go ", "int8", "uint8", "struct", "unmarshal", "json:"} {
				if strings.Contains(r.Message, goism) {
					t.Errorf("%s: message %q talks about Go (%q)", tt.data, r.Message, goism)
				}
			}
		}
	})
}

// TestInvocation_Decode: a number whose fraction is zero decodes into an
// integer; anything else behaves as encoding/json. Issue #19 item 4.
func TestInvocation_Decode(t *testing.T) {
	t.Parallel()
	var v struct {
		N   int             `json:"n"`
		F   float64         `json:"f"`
		Raw json.RawMessage `json:"raw"`
		S   string          `json:"s"`
	}
	inv := &neuro.Invocation{Data: json.RawMessage(`{"n":3.0,"f":2.5,"raw":{"k":1e0},"s":"1.0"}`)}
	testutil.Success(t, inv.Decode(&v))
	testutil.Equal(t, "n", v.N, 3)
	testutil.Equal(t, "f", v.F, 2.5)
	testutil.Equal(t, "raw", string(v.Raw), `{"k":1}`)
	testutil.Equal(t, "s", v.S, "1.0")
	testutil.Error(t, (&neuro.Invocation{Data: json.RawMessage(`{"n":3.5}`)}).Decode(&v))
	var empty struct{ N int }
	testutil.Success(t, (&neuro.Invocation{}).Decode(&empty))
}
