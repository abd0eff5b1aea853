package enginetest_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// Issue #17: a game server serves the in-memory Listener inside a
// testing/synctest bubble. It accepts the Listener as loopback TCP and
// reports its URL; the engine dials it through the Listener's client; a
// reply with speech completes; the server's handshake deadline passes in
// fake time, exactly; the Host of an upgrade is checked against the
// Listener's port as over TCP; and a closed Listener refuses dials.
func TestListener(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := enginetest.NewListener()
		a, ok := l.Addr().(*net.TCPAddr)
		if !ok || !a.IP.IsLoopback() {
			t.Fatalf("address %v is not loopback TCP", l.Addr())
		}
		testutil.Equal(t, "URL", l.URL, "ws://127.0.0.1:38471/rp-engine/socket")
		const timeout = 5 * time.Second
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{HandshakeTimeout: timeout, Logger: slog.New(slog.DiscardHandler)})
		testutil.Success(t, err)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		opts := &enginetest.Options{HTTPClient: l.Client()}
		eng, err := enginetest.Dial(ctx, l.URL, opts)
		testutil.Success(t, err)
		info, err := srv.WaitSession(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "session", info.ID, eng.SessionID())
		testutil.Equal(t, "socket URL", srv.SocketURL(), l.URL)
		reply, err := srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "g", CharacterID: "ari", Card: inlineCard("Ari"),
			Text: "hello", Voice: "F1"})
		testutil.Success(t, err)
		segments := 0
		for ev := range reply.Events() {
			if ev.Kind == rpengine.EventSegment {
				segments++
			}
		}
		res, err := reply.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", []any{res.Text, segments}, []any{"I hear you. You said: hello", 2})

		// An upgraded socket that never says hello is cut at the deadline.
		raw, _, err := enginetest.DialRaw(ctx, l.URL, opts)
		testutil.Success(t, err)
		start := time.Now()
		_, _, err = raw.Read(ctx)
		testutil.Error(t, err)
		testutil.Equal(t, "cut after", time.Since(start), timeout)
		// The Host must name the listener's port.
		_, resp, err := enginetest.DialRaw(ctx, "ws://127.0.0.1:1/rp-engine/socket", opts)
		testutil.Error(t, err)
		testutil.Equal(t, "status", resp.StatusCode, http.StatusForbidden)

		eng.Close()
		testutil.Success(t, srv.Close())
		testutil.ErrorIs(t, <-served, rpengine.ErrServerClosed)
		_, err = l.Dial(ctx, "tcp", "")
		testutil.ErrorIs(t, err, net.ErrClosed)
		_, err = enginetest.Dial(ctx, l.URL, opts)
		testutil.ErrorIs(t, err, net.ErrClosed)
	})
}
