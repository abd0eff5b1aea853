package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// loopback is a game server and a fake engine over loopback WebSocket,
// with one reply open whose audio the benchmark sends chunk by chunk.
//
// In raw mode the fake engine only sets the reply up; then the benchmark
// writes each chunk as a ready WebSocket frame straight onto the engine's
// TCP connection, and the engine's side drops the game's acks as it reads
// them, unparsed (the real engine ignores them over WebSocket, see
// docs/rpengine-protocol.md). What the process then spends per chunk is
// the game's: read, framing, decode, assembly, ack, queue.
type loopback struct {
	srv     *rpengine.Server
	serve   chan error
	eng     *enginetest.Engine
	tcp     *rawConn // the engine's connection (raw mode), else nil
	reply   *rpengine.Reply
	session string
	data    string         // base64 of one 32 KiB chunk
	msg     []byte         // build's message; in raw mode after frameRoom bytes for the frame header
	queued  chan time.Time // one per segment queued for playback
	ended   chan error
}

// rawConn is the engine's TCP connection, whose reads it drops once
// discard is set (raw mode). Once leave is set too, it stops reading
// until closing is closed: what the game sends stays in the socket
// (acks, a few KiB an hour of speech at BenchmarkSpeechCPU's pace), and
// the process does not spend a wakeup on each.
type rawConn struct {
	net.Conn
	discard, leave atomic.Bool
	closing        chan struct{}
}

func (c *rawConn) Read(p []byte) (int, error) {
	for {
		if c.leave.Load() {
			<-c.closing
		}
		n, err := c.Conn.Read(p)
		if err != nil || !c.discard.Load() {
			return n, err
		}
	}
}

// frameRoom is the room a client frame header takes at most: 2 bytes,
// an 8-byte length, a 4-byte mask key.
const frameRoom = 14

func newLoopback(tb testing.TB, raw bool) *loopback {
	return newLoopbackFor(tb, raw, (*loopback).consume)
}

// newLoopbackFor is newLoopback with another game: consume runs on a
// goroutine of its own once the reply is set up, and must read the reply
// to its end.
func newLoopbackFor(tb testing.TB, raw bool, consume func(*loopback)) *loopback {
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
	opts := &enginetest.Options{Faults: enginetest.Faults{Silent: true}}
	if raw {
		var d net.Dialer
		opts.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				l.tcp = &rawConn{Conn: c, closing: make(chan struct{})}
				return l.tcp, nil
			}
			return c, err
		}}}
	}
	if l.eng, err = enginetest.Dial(ctx, url, opts); err != nil {
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
	var start string
	if err == nil {
		start, err = l.eng.Send(ctx, "reply.audio.start", map[string]any{"requestId": replyID, "format": "pcm_s16le", "sampleRate": 44100, "channels": 1})
	}
	if err == nil && raw {
		// The game acks reply.audio.start last; after that it sends
		// nothing but the acks of the chunks, which the engine's side
		// now drops.
		_, err = l.eng.WaitFor(ctx, func(m enginetest.Message) bool {
			return m.Type == "ack" && bytes.Contains(m.Raw, []byte(strconv.Quote(start)))
		})
		l.tcp.discard.Store(true)
	}
	if err != nil {
		l.close(tb)
		tb.Fatal(err)
	}
	l.data = base64.StdEncoding.EncodeToString(enginetest.Synthesize(0, float64(chunkSamples)/enginetest.SampleRate)[:chunkBytes])
	go consume(l)
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
// would write it: through the fake engine, or in raw mode as one frame
// written on its connection.
func (l *loopback) send(ctx context.Context, i int) error {
	l.build(i)
	if l.tcp != nil {
		_, err := l.tcp.Write(l.frame())
		return err
	}
	return l.eng.SendRaw(ctx, l.msg)
}

// frame returns the message build wrote (raw mode) as one client text
// frame: FIN, opcode text, the length, masked with the key 0 (a client
// must mask; 0 leaves the payload as it is, so it needs no pass), written
// into the room before the message.
func (l *loopback) frame() []byte {
	n := len(l.msg) - frameRoom
	var h [frameRoom]byte // the mask key stays 0
	h[0] = 0x81
	size := 6
	switch {
	case n < 126:
		h[1] = 0x80 | byte(n)
	case n < 1<<16:
		h[1] = 0x80 | 126
		binary.BigEndian.PutUint16(h[2:], uint16(n))
		size = 8
	default:
		h[1] = 0x80 | 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
		size = frameRoom
	}
	f := l.msg[frameRoom-size:]
	copy(f, h[:size])
	return f
}

// build writes the text of chunk i into l.msg (with appends, so that the
// harness allocates nothing per chunk).
func (l *loopback) build(i int) {
	m := l.msg[:0]
	if l.tcp != nil {
		m = append(m, make([]byte, frameRoom)...)
	}
	m = append(m, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"bench-`...)
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
	if l.tcp != nil {
		close(l.tcp.closing)
	}
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
//
// Both include what the fake engine spends (its writer goroutine, the
// WebSocket client's framing and masking, and reading, decoding and
// recording the game's ack of every chunk). raw-latency and
// raw-throughput are the same in raw mode (see loopback): ready frames
// written straight onto the connection and the acks dropped unread, so
// that their time and allocations are the game's path.
func BenchmarkLoopback(b *testing.B) {
	for _, raw := range []bool{false, true} {
		prefix := ""
		if raw {
			prefix = "raw-"
		}
		b.Run(prefix+"latency", func(b *testing.B) { benchLatency(b, raw) })
		b.Run(prefix+"throughput", func(b *testing.B) { benchThroughput(b, raw) })
	}
}

func benchLatency(b *testing.B, raw bool) {
	ctx := context.Background()
	l := newLoopback(b, raw)
	defer l.close(b)
	var lat []time.Duration
	b.SetBytes(chunkBytes)
	b.ReportAllocs()
	i := 0
	cpu := startCPU()
	for b.Loop() {
		l.build(i)
		t0 := time.Now()
		var err error
		if raw {
			_, err = l.tcp.Write(l.frame())
		} else {
			err = l.eng.SendRaw(ctx, l.msg)
		}
		if err != nil {
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
}

func benchThroughput(b *testing.B, raw bool) {
	l := newLoopback(b, raw)
	defer l.close(b)
	b.SetBytes(chunkBytes)
	b.ReportAllocs()
	ctx, cancel := context.WithCancel(context.Background()) // ends the sender if the consumer fails
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
}

// TestLoopback checks the loopback harness, in both modes: every chunk
// sent becomes one queued segment, and the reply is still going.
func TestLoopback(t *testing.T) {
	t.Parallel()
	for _, raw := range []bool{false, true} {
		t.Run("raw="+strconv.FormatBool(raw), func(t *testing.T) {
			t.Parallel()
			l := newLoopback(t, raw)
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
		})
	}
}
