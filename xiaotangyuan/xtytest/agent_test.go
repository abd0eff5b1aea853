package xtytest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func Test_accumulator(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a := accumulator{interval: 80 * time.Millisecond}
	testutil.Equal(t, "first at once", a.push("你", at(0)), pendingDelta{"你", "你", true})
	testutil.Equal(t, "held", a.push("好", at(10)), pendingDelta{})
	testutil.Equal(t, "sentence end", a.push("。", at(20)), pendingDelta{"好。", "你好。", true})
	testutil.Equal(t, "held again", a.push("我", at(50)), pendingDelta{})
	testutil.Equal(t, "interval passed", a.push("是", at(100)), pendingDelta{"我是", "你好。我是", true})
	testutil.Equal(t, "question mark", a.push("谁?", at(101)), pendingDelta{"谁?", "你好。我是谁?", true})
	testutil.Equal(t, "held", a.push("x", at(102)), pendingDelta{})
	testutil.Equal(t, "flush", a.flush(at(103)), pendingDelta{"x", "你好。我是谁?x", true})
	testutil.Equal(t, "empty flush", a.flush(at(104)), pendingDelta{})
}

// The "started" marks of finished interactions are forgotten, so a long
// session does not grow the fake's memory.
func Test_startedBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewServer(nil)
		defer h.Close()
		ws, _, err := websocket.Dial(context.Background(), h.URL, &websocket.DialOptions{HTTPClient: h.Client()})
		testutil.Success(t, err)
		defer ws.CloseNow()
		_, _, err = ws.Read(context.Background()) // gateway.ready (a pipe has no buffer)
		testutil.Success(t, err)
		send := func(s string) { testutil.Success(t, ws.Write(context.Background(), websocket.MessageText, []byte(s))) }
		send(`{"jsonrpc":"2.0","id":1,"method":"adapter.hello","params":{"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1","capabilities":["assistant.text-stream"]}}`)
		for i := 2; i < 5; i++ {
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"chat.send","params":{"text":"hi"}}`, i))
		}
		for answers := 0; answers < 4; {
			_, b, err := ws.Read(context.Background())
			testutil.Success(t, err)
			if strings.Contains(string(b), `"id":`) {
				answers++
			}
		}
		hc := h.snapshot(true)[0]
		hc.mu.Lock()
		defer hc.mu.Unlock()
		testutil.Equal(t, "started marks left", len(hc.started), 0)
	})
}
