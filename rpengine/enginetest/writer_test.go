package enginetest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Issue #17: the engine's reader never blocks on a write, as a browser's
// WebSocket.send never does. Against a game whose reader acks each engine
// message before it reads the next, over an unbuffered in-memory pipe,
// an engine that wrote its acks on its reader deadlocked at the first
// message: each reader waited for the other to read.
func TestEngine_readerNeverBlocksOnWrite(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := NewListener()
		conns := make(chan *websocket.Conn, 1)
		in := make(chan map[string]any, 100)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
			if err != nil {
				return
			}
			defer c.CloseNow()
			ctx := context.Background()
			if _, _, err := c.Read(ctx); err != nil { // hello
				return
			}
			welcome, _ := wire.Encode("welcome", "w1", "", time.Now(), map[string]string{"sessionId": "s1", "serverVersion": "fake"})
			if c.Write(ctx, websocket.MessageText, welcome) != nil {
				return
			}
			conns <- c
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				var m map[string]any
				_ = json.Unmarshal(data, &m)
				if m["type"] != "ack" { // acked on the reader, before the next read
					ack, _ := wire.Encode("ack", wire.NewID(), "s1", time.Now(), wire.Ack{AcknowledgedMessageID: m["messageId"].(string)})
					if c.Write(ctx, websocket.MessageText, ack) != nil {
						return
					}
				}
				in <- m
			}
		})}
		served := make(chan struct{})
		go func() { defer close(served); srv.Serve(l) }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		e, err := Dial(ctx, l.URL, &Options{HTTPClient: l.Client()})
		testutil.Success(t, err)
		c := <-conns
		const n = 20
		for i := range n {
			msg := env("request.cancel", `"requestId":"r`+strconv.Itoa(i)+`"`)
			msg = []byte(strings.Replace(string(msg), `"messageId":"m"`, `"messageId":"m`+strconv.Itoa(i)+`"`, 1))
			testutil.Success(t, c.Write(ctx, websocket.MessageText, msg))
		}
		var acks, cancelled int
		for acks < n || cancelled < n {
			select {
			case m := <-in:
				switch m["type"] {
				case "ack":
					acks++
				case "reply.cancelled":
					cancelled++
				}
			case <-ctx.Done():
				t.Fatalf("deadlock: %d acks and %d reply.cancelled of %d", acks, cancelled, n)
			}
		}
		e.Close()
		srv.Close()
		<-served
	})
}
