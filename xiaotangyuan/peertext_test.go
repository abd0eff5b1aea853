package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// hostile is 1 MiB of a Harness's choosing, with a terminal escape: an
// answer quoting it whole could not be sent.
var hostile = "\x1b]0;pwned\a" + strings.Repeat("x", 1<<20)

// clipped is the most bytes a message, error or note may hold that
// carries a peer's text (internal/peertext bounds the peer's part).
const clipped = 10 << 10

// checkClipped fails unless s is bounded and carries no raw escape.
func checkClipped(t *testing.T, name, s string) {
	t.Helper()
	if len(s) > clipped || strings.Contains(s, "\x1b") {
		t.Errorf("%s: %d bytes (at most %d), raw escape %v: %.200q", name, len(s), clipped, strings.Contains(s, "\x1b"), s)
	}
}

// What a Harness chose and the client sends back (its answers), returns
// (its errors) or records (its notes) is clipped, as internal/peertext
// does for rpengine: before, a 1 MiB method or atom name made an answer
// over 1 MiB, which was then not sent at all, and an error held the
// Harness's message whole. Issue #31 item 7, for xiaotangyuan.
func TestClient_PeerTextClipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			return "", errors.New(hostile)
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			testutil.Success(t, c.HandleAtom("game.look", func(_ context.Context, args json.RawMessage) (any, error) {
				return nil, fmt.Errorf("nothing like %s here", args) // a game quoting the Harness
			}))
		})
		name, _ := json.Marshal(hostile)
		for id, req := range map[string]string{
			`"method"`:    `"method":` + string(name) + `,"params":{}`,
			`"atom"`:      `"method":"game.atom.execute","params":{"atom":` + string(name) + `,"arguments":{}}`,
			`"arguments"`: `"method":"game.atom.execute","params":{"atom":` + string(name) + `,"arguments":[]}`,
			`"handler"`:   `"method":"game.atom.execute","params":{"atom":"game.look","arguments":{"what":` + string(name) + `}}`,
		} {
			e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":` + id + `,` + req + `}`))
		}
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","method":` + string(name) + `}`)) // an unknown notification
		synctest.Wait()
		answers := 0
		for _, m := range e.h.Received() {
			if m.Method == "" {
				answers++
				checkClipped(t, "answer "+string(m.ID), string(m.Raw))
			}
		}
		testutil.Equal(t, "answers", answers, 4)

		_, err := e.c.Chat(context.Background(), "hi", nil)
		var re *xty.RPCError
		testutil.ErrorAs(t, err, &re)
		testutil.Equal(t, "the message is kept whole", re.Message, hostile)
		checkClipped(t, "harness error", err.Error())
		checkClipped(t, "disconnect error", (&xty.DisconnectError{Code: 4000, Reason: hostile[:123], Err: errors.New(hostile)}).Error())

		notes := 0
		for _, line := range strings.Split(strings.TrimSpace(e.recording()), "\n") {
			var l struct{ Note string }
			testutil.Success(t, json.Unmarshal([]byte(line), &l))
			if strings.Contains(l.Note, "xxx") {
				notes++
				checkClipped(t, "note", l.Note)
			}
		}
		testutil.Equal(t, "notes quoting the Harness", notes, 1)
	})
}
