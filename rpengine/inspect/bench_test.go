package inspect_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// BenchmarkReply_loopback is rpengine's loopback reply benchmark (one
// text+audio reply of two sentences, 0.5 s of 44.1 kHz speech each, over
// loopback WebSocket with the fake engine) without a recorder, with the
// core's recorder writing to io.Discard (what recording costs the core
// itself), and with an Inspector that no page watches as Recorder,
// Logger and OnSession: the last two differ by what the Inspector costs.
// cpu-ns/op is the process's CPU time per reply (the server's, the
// engine's and the recorder's goroutines), which a loaded machine
// distorts less than ns/op.
func BenchmarkReply_loopback(b *testing.B) {
	quiet := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		name string
		opts func() *rpengine.ServerOptions
	}{
		{"recorder=none", func() *rpengine.ServerOptions { return &rpengine.ServerOptions{Logger: quiet} }},
		{"recorder=discard", func() *rpengine.ServerOptions { return &rpengine.ServerOptions{Logger: quiet, Recorder: io.Discard} }},
		{"recorder=inspector", func() *rpengine.ServerOptions {
			in := inspect.New(nil)
			return &rpengine.ServerOptions{Recorder: in, Logger: in.Logger(quiet), OnSession: in.OnSession}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := startGame(b, c.opts())
			f.dialWS(b, nil)
			ctx := ctxT(b)
			card := testCard(b)
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				r, err := f.srv.Reply(ctx, audioReq(card, "bench"))
				if err != nil {
					b.Fatal(err)
				}
				for ev := range r.Events() {
					if ev.Kind == rpengine.EventEnd && ev.Err != nil {
						b.Fatal(ev.Err)
					}
				}
			}
			if c := cpuNow(); cpu > 0 {
				b.ReportMetric(float64(c-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
