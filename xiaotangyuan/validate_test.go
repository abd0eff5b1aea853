package xiaotangyuan_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

func TestSaveID(t *testing.T) {
	t.Parallel()
	// sha256("dst:slot-1"), computed independently.
	testutil.Equal(t, "hash", xty.SaveID("dst", "slot-1"), "77d62aaefebfcb76ded91f7915d46dfec44af463d5ec7159f2cb19dfc9ce341b")
	testutil.Success(t, xty.ValidateSaveID(xty.SaveID("oni", "C:/Users/me/colony.sav")))
	// Issue #20: the raw name is trimmed, as the DST adapter does; a
	// blank one is no save; no game means no prefix, as Stardew hashes
	// its unique id (sha256("123456"), computed independently).
	testutil.Equal(t, "trimmed", xty.SaveID("dst", " \tslot-1\n"), xty.SaveID("dst", "slot-1"))
	testutil.Equal(t, "blank", xty.SaveID("dst", " \n"), "")
	testutil.Equal(t, "unprefixed", xty.SaveID("", "123456"), "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92")
}

func TestValidateSaveID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, id string
		ok       bool
	}{
		{"charset", "Aa0._:-", true},
		{"128", strings.Repeat("a", 128), true},
		{"129", strings.Repeat("a", 129), false},
		{"empty", "", false},
		{"blank", " \t", false},
		{"slash", "C:/save", false},
		{"inner space", "a bc", false},
		{"unicode", "存档1", false},
		// Trimmed first, as the gateway trims with JavaScript's trim
		// (docs/xiaotangyuan-protocol.md, "How params are read"). Issue #33.
		{"padded", " slot-1 ", true},
		{"tab", "slot\t", true},
		{"128 and a space", strings.Repeat("a", 128) + " ", true},
		{"byte order mark", "\ufeffslot", true},
		{"U+0085, not white space in JavaScript", "slot\u0085", false},
		{"129 and a space", strings.Repeat("a", 129) + " ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := xty.ValidateSaveID(tc.id)
			if tc.ok {
				testutil.Success(t, err)
				return
			}
			var ve *xty.ValidationError
			testutil.ErrorAs(t, err, &ve)
			testutil.Equal(t, "field", ve.Field, "saveId")
		})
	}
}

// Bad calls are refused locally, before any connection is needed.
func TestClient_LocalValidation(t *testing.T) {
	t.Parallel()
	c, err := xty.New(baseOptions())
	testutil.Success(t, err)
	defer c.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		text  string
		cc    *xty.ChatContext
		field string // "" when valid (then the error is ErrDisconnected)
	}{
		{"blank text", "  \n", nil, "text"},
		{"role 2000", "hi", &xty.ChatContext{RoleInstructions: strings.Repeat("a", 2000)}, ""},
		{"role 2001", "hi", &xty.ChatContext{RoleInstructions: strings.Repeat("a", 2001)}, "context.roleInstructions"},
		{"role counts UTF-16 units", "hi", &xty.ChatContext{RoleInstructions: strings.Repeat("😀", 1001)}, "context.roleInstructions"},
		{"role 2000 CJK", "hi", &xty.ChatContext{RoleInstructions: strings.Repeat("汤", 2000)}, ""},
		{"role 2000 after trimming", "hi", &xty.ChatContext{RoleInstructions: " \n" + strings.Repeat("a", 2000) + "\t "}, ""},
		{"bad saveId", "hi", &xty.ChatContext{SaveID: "my save"}, "context.saveId"},
		{"observation array", "hi", &xty.ChatContext{Observation: []int{1}}, "context.observation"},
		{"observation unencodable", "hi", &xty.ChatContext{Observation: map[string]any{"f": func() {}}}, "context.observation"},
		{"observation object", "hi", &xty.ChatContext{Observation: map[string]int{"hp": 3}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Chat(ctx, tc.text, tc.cc)
			if tc.field == "" {
				testutil.ErrorIs(t, err, xty.ErrDisconnected)
				return
			}
			var ve *xty.ValidationError
			testutil.ErrorAs(t, err, &ve)
			testutil.Equal(t, "field", ve.Field, tc.field)
		})
	}
	var ve *xty.ValidationError
	testutil.ErrorAs(t, c.UpdateState(ctx, "not an object", ""), &ve)
	testutil.ErrorAs(t, c.UpdateState(ctx, map[string]int{}, "bad id!"), &ve)
}

// Every invalid option is a *ConfigError naming the Options field. For
// numbers and durations, zero is the default and negative disables the
// setting where that makes sense, and is refused otherwise (issue #21;
// until then a negative timeout expired every call at once).
func TestNew_Options(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(*xty.Options)
		field string
	}{
		{"defaults", func(*xty.Options) {}, ""},
		{"missing adapterId", func(o *xty.Options) { o.AdapterID = " " }, "AdapterID"},
		{"missing gameId", func(o *xty.Options) { o.GameID = "" }, "GameID"},
		{"missing version", func(o *xty.Options) { o.Version = "" }, "Version"},
		{"localhost", func(o *xty.Options) { o.URL = "ws://localhost:32145" }, ""},
		{"ipv6 loopback", func(o *xty.Options) { o.URL = "ws://[::1]:40000" }, ""},
		{"remote host", func(o *xty.Options) { o.URL = "ws://192.168.1.5:32145" }, "URL"},
		{"wss", func(o *xty.Options) { o.URL = "wss://127.0.0.1:32145" }, "URL"},
		{"low port", func(o *xty.Options) { o.URL = "ws://127.0.0.1:80" }, "URL"},
		{"no port", func(o *xty.Options) { o.URL = "ws://127.0.0.1" }, "URL"},
		{"bad saveId", func(o *xty.Options) { o.SaveID = "a/b" }, "SaveID"},
		{"atom as capability", func(o *xty.Options) { o.Capabilities = []string{"dst.attack"} }, "Capabilities"},
		{"speech capability", func(o *xty.Options) { o.Capabilities = []string{"speech.barge-in"} }, ""},
		{"read limit disabled", func(o *xty.Options) { o.ReadLimit = -1 }, ""},
		{"read limit below 1 MiB", func(o *xty.Options) { o.ReadLimit = 1000 }, "ReadLimit"},
		{"read limit 1 MiB", func(o *xty.Options) { o.ReadLimit = xty.MaxMessageSize }, ""},
		{"negative handshake timeout", func(o *xty.Options) { o.HandshakeTimeout = -1 }, "HandshakeTimeout"},
		{"chat timeout disabled", func(o *xty.Options) { o.ChatTimeout = -1 }, ""},
		{"call timeout disabled", func(o *xty.Options) { o.CallTimeout = -1 }, ""},
		{"negative atom timeout", func(o *xty.Options) { o.AtomTimeout = -time.Second }, "AtomTimeout"},
		{"pings disabled", func(o *xty.Options) { o.PingInterval = -1 }, ""},
		{"negative ping timeout", func(o *xty.Options) { o.PingTimeout = -1 }, "PingTimeout"},
		{"negative reconnect min", func(o *xty.Options) { o.ReconnectMin = -1 }, "ReconnectMin"},
		{"negative reconnect max", func(o *xty.Options) { o.ReconnectMax = -1 }, "ReconnectMax"},
		{"reconnect max below min", func(o *xty.Options) { o.ReconnectMin, o.ReconnectMax = time.Minute, time.Second }, "ReconnectMax"},
		{"reconnect min above the default max", func(o *xty.Options) { o.ReconnectMin = time.Minute }, ""},
		{"negative state interval", func(o *xty.Options) { o.StateInterval = -1 }, "StateInterval"},
		{"negative max in flight", func(o *xty.Options) { o.MaxInFlight = -1 }, "MaxInFlight"},
		{"negative max events", func(o *xty.Options) { o.MaxEvents = -1 }, "MaxEvents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := baseOptions()
			o.URL = ""
			tc.edit(o)
			c, err := xty.New(o)
			if tc.field == "" {
				testutil.Success(t, err)
				c.Close()
				return
			}
			var ce *xty.ConfigError
			testutil.ErrorAs(t, err, &ce)
			testutil.Equal(t, "field", ce.Field, tc.field)
			testutil.Equal(t, "text", err.Error(), "xiaotangyuan: option "+tc.field+": "+ce.Reason)
		})
	}
}

// A negative CallTimeout leaves a call bounded by its ctx only.
func TestClient_CallTimeoutDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			time.Sleep(time.Hour)
			return "late", nil
		}
		opts := baseOptions()
		opts.ChatTimeout = -1
		e := newEnv(t, &xtytest.Options{Agent: slow}, opts, nil)
		start := time.Now()
		r, err := e.c.Chat(context.Background(), "hi", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", r.Text, "late")
		testutil.Equal(t, "waited", time.Since(start), time.Hour)
	})
}

// A saveId is trimmed as the gateway trims it before it is checked, and
// sent trimmed, wherever it goes: the hello, a chat's context,
// state.update, the hello after SetSaveID; a blank one is none. Before,
// the client refused " slot-1 ", "slot\t" and 128 characters and a space,
// which the gateway accepts. Issue #33.
func TestClient_SaveIDTrimmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("s", 128)
		opts := baseOptions()
		opts.SaveID = " slot-1 "
		e := newEnv(t, nil, opts, nil)
		_, err := e.c.Chat(context.Background(), "hi", &xty.ChatContext{SaveID: "slot-2\t"})
		testutil.Success(t, err)
		testutil.Success(t, e.c.UpdateState(context.Background(), map[string]int{}, long+" "))
		testutil.Success(t, e.c.SetSaveID(context.Background(), "\nslot-3"))
		testutil.Success(t, e.c.SetSaveID(context.Background(), "slot-3 ")) // the same save: no reconnect
		testutil.Success(t, e.c.SetSaveID(context.Background(), " "))       // none
		var sent []any
		for _, m := range e.h.Received() {
			p := decode[map[string]any](t, m.Params)
			if cc, ok := p["context"].(map[string]any); ok {
				p = cc
			}
			sent = append(sent, p["saveId"])
		}
		testutil.Equal(t, "saveIds sent", sent, []any{"slot-1", "slot-2", long, "slot-3", nil})
	})
}
