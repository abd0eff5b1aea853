package rpengine

// Issue #31, items 1 and 2 (docs/reliability.md): what a slow engine may
// hold in the game's outbound queue, and who gets a connection slot.
// Over in-memory pipes inside testing/synctest (listener_test.go's
// pipeServer), where an engine that does not read blocks the game's
// writes at once, as a full socket buffer does.

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
)

// Issue #31, item 1: an engine that stops reading while it sends
// messages with 1 MiB messageIds. The game acks each one; the acks piled
// up in the session's write queue until WriteTimeout (538 messages, RSS
// from 87 MiB to 918 MiB). The queue is bounded in bytes: once
// transport.MaxQueuedBytes wait, the engine is dropped as a slow
// consumer (close 1008) and the pending request ends with
// ErrConnectionLost saying why.
func TestServer_engineNotReadingBoundedInBytes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ps := startPipeServer(t, ServerOptions{AckTimeout: -1, IdleTimeout: -1})
		defer ps.close()
		ctx := context.Background()
		c, err := ps.engine(ctx)
		testutil.Success(t, err)
		defer c.CloseNow()
		// A pending request: its message is the first the engine leaves
		// unread.
		crd, err := card.Parse([]byte(unitCard))
		testutil.Success(t, err)
		replied := make(chan error, 1)
		go func() {
			r, err := ps.srv.Reply(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: crd, Text: "hi"})
			if err == nil {
				_, err = r.Wait(ctx)
			}
			replied <- err
		}()
		synctest.Wait()

		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		const n, idBytes = 538, 1 << 20
		id := strings.Repeat("m", idBytes)
		sent := 0
		for ; sent < n; sent++ {
			msg := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"future.kind","messageId":"` +
				id + strconv.Itoa(sent) + `","timestamp":"t"}`
			if c.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
				break
			}
			synctest.Wait() // the game has taken the message in
			if _, live := ps.srv.Session(); !live {
				sent++
				break // dropped
			}
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		t.Logf("the engine sent %d messages with 1 MiB messageIds before it was dropped; heap in use grew by %d MiB",
			sent, (int64(after.HeapInuse)-int64(before.HeapInuse))>>20)
		// Each ack holds one messageId: the queue holds at most
		// MaxQueuedBytes of them, and the one that does not fit ends
		// the session.
		if max := transport.MaxQueuedBytes/idBytes + 1; sent > max {
			t.Errorf("the engine sent %d messages of 1 MiB without being dropped; the bound allows %d", sent, max)
		}
		// The engine reads again: what the game was writing, then the
		// close.
		_, _, err = c.Read(ctx)
		for err == nil {
			_, _, err = c.Read(ctx)
		}
		testutil.Equal(t, "close status", websocket.CloseStatus(err), websocket.StatusPolicyViolation)
		err = <-replied
		testutil.ErrorIs(t, err, ErrConnectionLost)
		if !strings.Contains(err.Error(), "the engine is not reading: ") {
			t.Errorf("request ended with %q, which does not say the engine is not reading", err)
		}
	})
}

// Issue #31, item 2: 500 connections from a local process that send
// nothing. The server held them 64 at a time, each until its handshake
// deadline, and an engine behind them waited for all of them (12 s on a
// quiet machine). A connection that has sent nothing gives way to a new
// one: none of them holds its slot until the deadline while the engine
// waits for one.
func TestServer_silentConnectionsGiveWay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const timeout = DefaultHandshakeTimeout
		ps := startPipeServer(t, ServerOptions{})
		defer ps.close()
		const n = 500
		var held atomic.Int32 // silent connections cut at the handshake deadline
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if ps.raw(func(net.Conn) {}).closed >= timeout {
					held.Add(1)
				}
			})
		}
		synctest.Wait() // every one is accepted or waits for a slot
		start := time.Now()
		c, err := ps.engine(context.Background())
		testutil.Success(t, err)
		t.Logf("the engine waited %v behind %d silent connections; %d of them held their slot until the handshake deadline meanwhile",
			time.Since(start), n, held.Load())
		testutil.Equal(t, "silent connections that held their slot to the deadline while the engine waited", int(held.Load()), 0)
		c.CloseNow()
		wg.Wait()
	})
}

// Issue #31, item 2: a supersession storm, 200 engines that connect and
// say hello one after the other, whose old sockets never answer the
// close. Each old socket held its slot for the close's 5 s, so 64 of
// them stopped the storm (199 of 200 welcomed in 15 s). A connection
// the server is closing gives way to a new one: all 200 are welcomed
// before any close wait runs out.
func TestServer_supersessionStorm(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ps := startPipeServer(t, ServerOptions{})
		defer ps.close()
		const n = 200
		var welcomed atomic.Int32
		var conns []*websocket.Conn
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range n {
				c, err := ps.engine(context.Background()) // then never reads: the close is never answered
				if err != nil {
					t.Error(err)
					return
				}
				conns = append(conns, c)
				welcomed.Add(1)
			}
		}()
		synctest.Wait()
		testutil.Equal(t, "engines welcomed before any close wait ran out", int(welcomed.Load()), n)
		<-done
		for _, c := range conns {
			c.CloseNow()
		}
	})
}
