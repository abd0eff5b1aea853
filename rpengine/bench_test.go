package rpengine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gamelink-go/gamelink/rpengine"
)

// BenchmarkReply_loopback measures one whole text+audio reply (two
// sentences, 0.5 s of 44.1 kHz speech each) over loopback WebSocket with
// the fake engine: request, acks, card reference, deltas, 4 chunks,
// assembly, consumption.
func BenchmarkReply_loopback(b *testing.B) {
	f := newTCPServer(b, nil)
	f.dial(b, nil)
	ctx := ctxT(b)
	c := testCard(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := f.srv.Reply(ctx, audioReq(c, "bench"))
		if err != nil {
			b.Fatal(err)
		}
		for ev := range r.Events() {
			if ev.Kind == rpengine.EventEnd && ev.Err != nil {
				b.Fatal(ev.Err)
			}
		}
	}
}

// BenchmarkReply_concurrent100 measures 100 concurrent text replies over
// loopback WebSocket against the fake engine's queue limit of 20: the
// capacity gate (issue #15) keeps at most 20 in the engine and sends the
// rest as room frees, in order per character.
func BenchmarkReply_concurrent100(b *testing.B) {
	f := newTCPServer(b, nil)
	f.dial(b, nil)
	ctx := ctxT(b)
	c := testCard(b)
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := textReq(c, "bench")
				req.CharacterID = fmt.Sprint("c", i%5)
				r, err := f.srv.Reply(ctx, req)
				if err == nil {
					_, err = r.Wait(ctx)
				}
				if err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "replies/s")
}
