package bench

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// The device of the playback latency benchmark: 48 kHz stereo, pulled in
// 10 ms periods.
const (
	deviceRate   = 48000
	devicePeriod = 10 * time.Millisecond
)

// pulledDevice is an audio.Mixer read one period at a time, every period,
// by a goroutine: what a sound card's callback does (the fake device of
// issue #24; the null backend is not reachable from outside the audio
// package). After each read it checks whether the watched reply has
// started, and reports the start of that read.
type pulledDevice struct {
	mix     *audio.Mixer
	speaker *audio.Speaker
	watch   chan string    // the reply to watch for; one at a time
	started chan time.Time // when the read that played its first sample began
	stop    chan struct{}
	done    chan struct{}
}

func newPulledDevice(tb testing.TB) *pulledDevice {
	mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: deviceRate, Encoding: audio.EncodingF32LE})
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := mix.NewSpeaker(nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := &pulledDevice{mix: mix, speaker: sp, watch: make(chan string, 1), started: make(chan time.Time, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go d.run()
	return d
}

func (d *pulledDevice) run() {
	defer close(d.done)
	buf := make([]byte, int(int64(deviceRate)*int64(devicePeriod)/int64(time.Second))*2*4)
	tick := time.NewTicker(devicePeriod)
	defer tick.Stop()
	var reply string
	for {
		select {
		case <-tick.C:
		case <-d.stop:
			return
		}
		if reply == "" {
			select {
			case reply = <-d.watch:
			default:
			}
		}
		t := time.Now()
		if _, err := d.mix.Read(buf); err != nil {
			return
		}
		if reply != "" {
			if pos, ok := d.speaker.Heard(reply); ok && pos.Heard > 0 {
				d.started <- t
				reply = ""
			}
		}
	}
}

func (d *pulledDevice) close() {
	close(d.stop)
	<-d.done
	_ = d.mix.Close()
}

// latencyChunk is the text of a reply.audio.chunk that is a sentence of
// its own, for reply.
func latencyChunk(reply string, data string) []byte {
	return fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk",`+
		`"messageId":"m-%s","sessionId":"s-1","timestamp":"2026-07-14T00:00:00.000Z","requestId":%q,"sequence":0,`+
		`"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":1,"data":%q}`, reply, reply, data)
}

// replyAssembler returns the assembler of a reply whose reply.audio.start
// arrived.
func replyAssembler(tb testing.TB, reply string) *stream.Assembler {
	a, err := stream.NewAssembler(&stream.Options{RequestID: reply})
	if err == nil {
		err = a.Push(fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.start","messageId":"s-%s",`+
			`"timestamp":"2026-07-14T00:00:00.000Z","requestId":%q,"format":"pcm_s16le","sampleRate":%d,"channels":1}`, reply, reply, enginetest.SampleRate))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// playChunk is the game's side of one chunk, from its message text (the
// reader has read its last byte) to its samples queued on the speaker:
// stream.Assembler.Push (which decodes it), Speaker.Enqueue (float
// conversion and resampling from 44.1 kHz to the device's 48 kHz).
func playChunk(a *stream.Assembler, sp *audio.Speaker, reply string, msg []byte) error {
	if err := a.Push(msg); err != nil {
		return err
	}
	out, ok := a.Next()
	if !ok || out.Kind != stream.OutputSegment {
		return fmt.Errorf("no segment from the chunk: %+v", out)
	}
	return sp.Enqueue(reply, out.Segment)
}

// BenchmarkPlaybackLatency measures the game-added playback latency of a
// reply's audio: from a reply.audio.chunk message in memory (the reader
// has read its last byte) to its first sample taken by the device, a
// Mixer read every 10 ms as a sound card's callback reads. The game's work
// (playChunk) is followed by the wait for the next period, so a period is
// the floor, and the target is one period plus 2 ms (issue #24). Each
// chunk is a sentence of its own and arrives at a random phase of the
// device's clock (after the previous one was interrupted and dropped).
// p50_us and p99_us are the latency, period_ms the period, and work_us
// the median time of the game's work alone.
func BenchmarkPlaybackLatency(b *testing.B) {
	dev := newPulledDevice(b)
	defer dev.close()
	data := base64.StdEncoding.EncodeToString(enginetest.Synthesize(0, float64(chunkSamples)/enginetest.SampleRate)[:chunkBytes])
	rng := rand.New(rand.NewPCG(24, 1)) // the phases of the chunks' arrival
	var lat, work []time.Duration
	b.SetBytes(chunkBytes)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		time.Sleep(time.Duration(rng.Int64N(int64(devicePeriod))))
		reply := fmt.Sprintf("r%d", i)
		msg := latencyChunk(reply, data)
		a := replyAssembler(b, reply)
		dev.watch <- reply
		b.StartTimer()
		t0 := time.Now()
		if err := playChunk(a, dev.speaker, reply, msg); err != nil {
			b.Fatal(err)
		}
		work = append(work, time.Since(t0))
		select {
		case t1 := <-dev.started:
			lat = append(lat, t1.Sub(t0))
		case <-time.After(time.Second):
			b.Fatal(errors.New("the first sample never played"))
		}
		b.StopTimer()
		dev.speaker.Interrupt()
		for dev.speaker.Stats().Queued > 0 { // dropped by the next read
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		i++
	}
	slices.Sort(lat)
	slices.Sort(work)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_us")
	b.ReportMetric(float64(devicePeriod.Milliseconds()), "period_ms")
	b.ReportMetric(float64(work[len(work)/2].Microseconds()), "work_us")
}

// TestPlaybackLatency checks the rig of BenchmarkPlaybackLatency: a chunk
// is reported heard once it was queued, not before, and within a few
// periods.
func TestPlaybackLatency(t *testing.T) {
	t.Parallel()
	dev := newPulledDevice(t)
	defer dev.close()
	data := base64.StdEncoding.EncodeToString(enginetest.Synthesize(0, 0.05)[:2*2205])
	for i := range 3 {
		reply := fmt.Sprintf("t%d", i)
		dev.watch <- reply
		time.Sleep(3 * devicePeriod) // reads go on while nothing is queued
		select {
		case <-dev.started:
			t.Fatalf("chunk %d reported heard before it was queued", i)
		default:
		}
		if err := playChunk(replyAssembler(t, reply), dev.speaker, reply, latencyChunk(reply, data)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-dev.started:
		case <-time.After(5 * time.Second):
			t.Fatalf("chunk %d never heard", i)
		}
		dev.speaker.Interrupt()
	}
}
