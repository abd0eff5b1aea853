package inspect_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"

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

// BenchmarkInspector_Write measures what the Inspector itself does with
// the recorder lines of one spoken reply of 2, 8 and 32 sentences (0.5 s
// of speech each), replayed into a new Inspector that no page watches:
// its share of the recorder goroutine's work (the lines are recorded once,
// from a real server and the fake engine).
func BenchmarkInspector_Write(b *testing.B) {
	for _, n := range []int{2, 8, 32} {
		lines := recordReply(b, n)
		size := 0
		for _, l := range lines {
			size += len(l)
		}
		b.Run(fmt.Sprintf("sentences=%d", n), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				in := inspect.New(nil)
				for _, l := range lines {
					_, _ = in.Write(l)
				}
			}
		})
	}
}

// recordReply returns the recorder lines of a session with one spoken
// reply of n sentences, one line a slice.
func recordReply(b *testing.B, n int) [][]byte {
	var rec lineRecorder
	f := startGame(b, &rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler), Recorder: &rec})
	f.dialWS(b, &enginetest.Options{Responder: func(enginetest.Request) enginetest.Script {
		return enginetest.Script{Sentences: slices.Repeat([]string{"A sentence."}, n)}
	}})
	r, err := f.srv.Reply(ctxT(b), audioReq(testCard(b), "bench"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Wait(ctxT(b)); err != nil {
		b.Fatal(err)
	}
	testutil.Success(b, f.srv.Close()) // writes what waits
	return rec.lines()
}

// lineRecorder keeps the lines a Recorder writes.
type lineRecorder struct {
	mu sync.Mutex
	ls [][]byte
}

func (l *lineRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ls = append(l.ls, bytes.Clone(p))
	return len(p), nil
}

func (l *lineRecorder) lines() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ls
}
