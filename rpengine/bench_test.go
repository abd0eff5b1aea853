package rpengine_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/rpengine"
)

// BenchmarkReply_loopback measures one whole text+audio reply (two
// sentences, 0.5 s of 44.1 kHz speech each) over loopback WebSocket with
// the fake engine: request, acks, card reference, deltas, 4 chunks,
// assembly, consumption.
func BenchmarkReply_loopback(b *testing.B) {
	f := newServer(b, nil)
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
