package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// scaleReplyBytes is the length of a scaling chat's reply, whatever its
// number of deltas: at 16n each delta adds one byte.
const scaleReplyBytes = 1600

// BenchmarkScaleXiaotangyuanChat is the XiaoTangYuan row of the scaling
// table: one chat whose reply of 1,600 bytes streams as n deltas from the
// fake Harness (xtytest, in memory) to a game that receives every event,
// at n, 4n and 16n.
//
// Each delta carries the reply's text so far, as the gateway's do
// (docs/xiaotangyuan-protocol.md, "Streaming"): half the reply on
// average, whatever n, so the bytes on the wire (delta_kB) grow as n and
// any faster growth is the client's own. A longer reply at the gateway's
// pace (a delta per 80 ms) has more deltas and longer ones: its wire
// bytes, and the cost of reading them, grow as its length squared
// whatever the client does.
func BenchmarkScaleXiaotangyuanChat(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchmarkXiaotangyuanChat(b, n) })
	}
}

func benchmarkXiaotangyuanChat(b *testing.B, n int) {
	// Each chunk ends a sentence, so the fake emits it as its own delta,
	// as the gateway does.
	chunk := strings.Repeat("x", scaleReplyBytes/n-1) + "!"
	reply := strings.Repeat(chunk, n)
	agent := func(ctx context.Context, t *xtytest.Turn) (string, error) {
		for range n {
			t.Say(chunk)
		}
		return reply, nil
	}
	h := xtytest.NewServer(&xtytest.Options{Agent: agent})
	defer h.Close()
	c, err := xiaotangyuan.New(&xiaotangyuan.Options{AdapterID: "bench", GameID: "bench", Version: "1",
		URL: h.URL, HTTPClient: h.Client(), PingInterval: -1, MaxEvents: n + 16}) // room for every event of a reply
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Connect(ctx); err != nil {
		b.Fatal(err)
	}
	texts := make(chan int, 1) // the text events of each reply, at its done
	go func() {
		count := 0
		for ev := range c.Events() {
			switch ev.Kind {
			case xiaotangyuan.EventText:
				count++
			case xiaotangyuan.EventDone:
				texts <- count
				count = 0
			}
		}
	}()
	chat := func() {
		r, err := c.Chat(ctx, "talk", nil)
		if err != nil || r.Text != reply {
			b.Fatalf("chat: %v, %d bytes", err, len(r.Text))
		}
		if got := <-texts; got != n || c.Dropped() != 0 {
			b.Fatalf("%d text events of %d, %d dropped", got, n, c.Dropped())
		}
	}
	chat() // warm up
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		chat()
	}
	cpu.report(b)
	b.ReportMetric(float64(len(chunk)*n*(n+1)/2)/1e3, "delta_kB")
}
