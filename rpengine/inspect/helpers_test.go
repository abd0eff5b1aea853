package inspect_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

const cardJSON = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"A fox.","personality":"curious","scenario":"a forest","first_mes":"Hi!","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"test","character_version":"1","alternate_greetings":[],"tags":["fox"],"extensions":{}}}`

func testCard(t testing.TB) *card.Card {
	t.Helper()
	c, err := card.Parse([]byte(cardJSON))
	testutil.Success(t, err)
	return c
}

func audioReq(c *card.Card, text string) rpengine.ReplyRequest {
	return rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Text: text, Voice: "F1"}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// game is a running server.
type game struct {
	srv *rpengine.Server
	url string // WebSocket URL, when served over TCP
}

// startGame serves opts on an ephemeral loopback port (or its mailbox,
// when opts.Mailbox is set) until the test ends.
func startGame(t testing.TB, opts *rpengine.ServerOptions) *game {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	srv, err := rpengine.NewServer(opts)
	testutil.Success(t, err)
	g := &game{srv: srv}
	if opts.Mailbox != nil {
		testutil.Success(t, srv.Start())
		t.Cleanup(func() { testutil.Success(t, srv.Close()) })
		return g
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		testutil.Success(t, srv.Close())
		if err := <-done; !errors.Is(err, rpengine.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	g.url = "ws://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + rpengine.SocketPath
	return g
}

// dialWS connects a fake engine over WebSocket and waits for its session.
func (g *game) dialWS(t testing.TB, opts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, g.url, opts)
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	g.waitSession(t, eng)
	return eng
}

// dialMailbox connects a fake engine to the mailbox folder dir. It polls
// every 2 ms, far faster than the real engine's 50 ms, so it restores a
// segment's placeholder as soon as the game answers: the inspector takes
// the segment's audio from the game's own note, never from the slot
// (issue #36), so no poll is too fast for it.
func (g *game) dialMailbox(t testing.TB, dir string, opts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	ctx := ctxT(t)
	eng, err := enginetest.DialMailbox(ctx, dir, opts, &enginetest.MailboxOptions{Poll: 2 * time.Millisecond})
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	g.waitSession(t, eng)
	return eng
}

func (g *game) waitSession(t testing.TB, eng *enginetest.Engine) {
	t.Helper()
	ctx := ctxT(t)
	for {
		info, err := g.srv.WaitSession(ctx)
		testutil.Success(t, err)
		if info.ID == eng.SessionID() {
			return
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}
