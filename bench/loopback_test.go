package bench

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// loopback is a game server and a fake engine over loopback WebSocket,
// with one reply open whose audio the benchmark sends chunk by chunk.
type loopback struct {
	srv     *rpengine.Server
	serve   chan error
	eng     *enginetest.Engine
	reply   *rpengine.Reply
	session string
	data    string // base64 of one 32 KiB chunk
	msg     []byte
	queued  chan time.Time // one per segment queued for playback
	ended   chan error
}

func newLoopback(tb testing.TB) *loopback {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0", MaxPendingAudio: 24 * time.Hour,
		IdleTimeout: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l := &loopback{srv: srv, serve: make(chan error, 1), queued: make(chan time.Time, 1<<16), ended: make(chan error, 1)}
	go func() { l.serve <- srv.Serve(ln) }()
	url := "ws://" + ln.Addr().String() + rpengine.SocketPath
	if l.eng, err = enginetest.Dial(ctx, url, &enginetest.Options{Faults: enginetest.Faults{Silent: true}}); err != nil {
		l.close(tb)
		tb.Fatal(err)
	}
	l.session = l.eng.SessionID()
	for {
		info, err := srv.WaitSession(ctx)
		if err != nil {
			l.close(tb)
			tb.Fatal(err)
		}
		if info.ID == l.session {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c, err := card.Parse(Cards()[0].JSON)
	if err != nil {
		tb.Fatal(err)
	}
	l.reply, err = srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c,
		RequestID: replyID, Text: "hello", Voice: "F1"})
	if err == nil {
		_, err = l.eng.Send(ctx, "reply.audio.start", map[string]any{"requestId": replyID, "format": "pcm_s16le", "sampleRate": 44100, "channels": 1})
	}
	if err != nil {
		l.close(tb)
		tb.Fatal(err)
	}
	l.data = base64.StdEncoding.EncodeToString(enginetest.Synthesize(0, float64(chunkSamples)/enginetest.SampleRate)[:chunkBytes])
	go l.consume()
	return l
}

// consume is the game: it queues every segment for playback on an
// audio.Speaker of a 48 kHz mixer (Speaker.Enqueue: the conversion to
// float32; the resampling to the device's rate happens as the device
// plays, see bench/README.md) and reports when it did. Nothing plays here:
// every drainEvery segments it interrupts the speaker and reads one frame
// of the mixer, which drops what was queued (no fade), so that the
// speaker's queue never fills; that is outside the measured span, after
// the report.
func (l *loopback) consume() {
	fail := func(err error) {
		l.ended <- err
		for range l.reply.Events() { // until the reply ends, so Close never waits for us
		}
	}
	mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: deviceRate, Encoding: audio.EncodingF32LE})
	if err != nil {
		fail(err)
		return
	}
	defer mix.Close()
	sp, err := mix.NewSpeaker(&audio.SpeakerOptions{Fade: -1})
	if err != nil {
		fail(err)
		return
	}
	frame := make([]byte, 2*4) // one stereo f32 frame
	n := 0
	for ev := range l.reply.Events() {
		switch ev.Kind {
		case rpengine.EventSegment:
			if err := sp.Enqueue(replyID, ev.Segment); err != nil {
				fail(err)
				return
			}
			l.queued <- time.Now()
			if n++; n%drainEvery == 0 {
				sp.Interrupt()
				if _, err := mix.Read(frame); err != nil {
					fail(err)
					return
				}
			}
		case rpengine.EventEnd:
			l.ended <- ev.Err
			return
		}
	}
}

// drainEvery is how many segments consume queues before it drops them:
// a queue a few segments deep, as a playing device keeps it, whose
// reclaimed samples the speaker reuses for the next ones.
const drainEvery = 4

// send sends chunk i as a sentence of its own (one chunk), as the engine
// would write it.
func (l *loopback) send(ctx context.Context, i int) error {
	l.build(i)
	return l.eng.SendRaw(ctx, l.msg)
}

// build writes the text of chunk i into l.msg (with appends, so that the
// harness allocates nothing per chunk).
func (l *loopback) build(i int) {
	m := append(l.msg[:0], `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"bench-`...)
	m = strconv.AppendInt(m, int64(i), 10)
	m = append(m, `","sessionId":`...)
	m = strconv.AppendQuote(m, l.session)
	m = append(m, `,"timestamp":"2026-07-14T00:00:00.000Z","requestId":`...)
	m = strconv.AppendQuote(m, replyID)
	m = append(m, `,"sequence":`...)
	m = strconv.AppendInt(m, int64(i), 10)
	m = append(m, `,"segmentSequence":`...)
	m = strconv.AppendInt(m, int64(i), 10)
	m = append(m, `,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"`...)
	m = append(m, l.data...)
	l.msg = append(m, `"}`...)
}

func (l *loopback) close(tb testing.TB) {
	if l.eng != nil {
		l.eng.Close()
	}
	if err := l.srv.Close(); err != nil {
		tb.Error(err)
	}
	if err := <-l.serve; !errors.Is(err, rpengine.ErrServerClosed) {
		tb.Errorf("Serve: %v", err)
	}
}

// BenchmarkLoopback runs rpengine.Server and an enginetest engine in one
// process over loopback WebSocket. Every reply.audio.chunk (32 KiB) is a
// sentence of its own, so each produces one segment.
//
//   - latency: the engine sends one chunk and waits until the game has
//     queued its samples for playback; p50_us and p99_us are the time from
//     the engine's send to the samples queued;
//   - throughput: the engine sends chunks back to back; msgs/s is how many
//     the game queues per second, x_realtime how much audio.
func BenchmarkLoopback(b *testing.B) {
	ctx := context.Background()
	b.Run("latency", func(b *testing.B) {
		l := newLoopback(b)
		defer l.close(b)
		var lat []time.Duration
		b.SetBytes(chunkBytes)
		b.ReportAllocs()
		i := 0
		cpu := startCPU()
		for b.Loop() {
			l.build(i)
			t0 := time.Now()
			if err := l.eng.SendRaw(ctx, l.msg); err != nil {
				b.Fatal(err)
			}
			select {
			case t1 := <-l.queued:
				lat = append(lat, t1.Sub(t0))
			case err := <-l.ended:
				b.Fatalf("reply ended: %v", err)
			}
			i++
		}
		cpu.report(b)
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_us")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_us")
	})
	b.Run("throughput", func(b *testing.B) {
		l := newLoopback(b)
		defer l.close(b)
		b.SetBytes(chunkBytes)
		b.ReportAllocs()
		ctx, cancel := context.WithCancel(ctx) // ends the sender if the consumer fails
		defer cancel()
		sent := make(chan error, 1)
		// window bounds the chunks in flight, as a real engine's pace
		// does: an unpaced flood would (correctly) trip the server's
		// slow-consumer bound of 1024 unread events once the reader
		// outruns this consumer.
		window := make(chan struct{}, 256)
		b.ResetTimer()
		cpu := startCPU()
		go func() {
			for i := range b.N {
				select {
				case window <- struct{}{}:
				case <-ctx.Done():
					sent <- ctx.Err()
					return
				}
				if err := l.send(ctx, i); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		for range b.N {
			select {
			case <-l.queued:
				<-window
			case err := <-l.ended:
				b.Fatalf("reply ended: %v", err)
			}
		}
		b.StopTimer()
		cpu.report(b)
		if err := <-sent; err != nil {
			b.Fatal(err)
		}
		perOp := b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(time.Second)/float64(perOp), "msgs/s")
		reportRealtime(b, chunkAudio)
	})
}

// TestLoopback checks the loopback harness: every chunk sent becomes one
// queued segment, and the reply is still going.
func TestLoopback(t *testing.T) {
	t.Parallel()
	l := newLoopback(t)
	defer l.close(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if err := l.send(ctx, i); err != nil {
			t.Fatal(err)
		}
		select {
		case <-l.queued:
		case err := <-l.ended:
			t.Fatalf("reply ended after %d chunks: %v", i, err)
		case <-ctx.Done():
			t.Fatal("chunk " + strconv.Itoa(i) + " never queued")
		}
	}
	for _, m := range l.eng.Received() {
		if m.Err != nil {
			t.Errorf("engine refused %s: %v", m.Type, m.Err)
		}
	}
}
