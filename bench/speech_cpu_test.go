package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// The voiced reply of BenchmarkSpeechCPU: 60 s of speech, kept 2 s ahead
// of the device, after 2 s of silence that measure the floor.
const (
	speechSeconds = 60
	speechAhead   = 2 * time.Second
	speechSilence = 2 * time.Second
)

// BenchmarkSpeechCPU is the whole path of a voiced reply, as a game runs
// it (issue #31): 60 s of speech streamed over loopback WebSocket, each
// 32 KiB chunk a sentence of its own, queued on an audio.Speaker of a
// Null audio.Device (48 kHz stereo, 10 ms periods), which plays its Mixer
// in real time through the same callback as a sound card's. The engine's
// side writes ready frames (raw mode, see loopback) and leaves the game's
// acks unread in the socket, so what the process spends is the game's:
// the socket reader, decoding, assembly, acks, Enqueue's conversion, the
// resampling and mixing in the callback, the device's wakeups, and the
// collector. The engine sends a chunk whenever less than 2 s wait in the
// speaker's queue, as a real engine, which synthesizes ahead, keeps it
// fed; the harness wakes once a chunk.
//
// cpu-ms/speech-s is the process's CPU time per second of speech (the
// goal: at most 2 ms, 0.2% of one core). floor-ms/s is the same process
// in the 2 s of silence before the reply (connected, the device playing
// an idle speaker): what the device's 100 wakeups a second cost by
// themselves (see bench/README.md). One op takes 63 s of wall time.
func BenchmarkSpeechCPU(b *testing.B) {
	for b.Loop() {
		benchSpeechCPU(b)
	}
}

func benchSpeechCPU(b *testing.B) {
	dev, err := audio.OpenDevice(&audio.DeviceOptions{Null: true, SampleRate: deviceRate, Period: devicePeriod})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	sp, err := dev.NewSpeaker(nil)
	if err != nil {
		b.Fatal(err)
	}
	failed := make(chan error, 1) // the reply ended, or a segment was refused
	l := newLoopbackFor(b, true, func(l *loopback) {
		var err error
		for ev := range l.reply.Events() {
			switch {
			case err != nil:
			case ev.Kind == rpengine.EventSegment:
				err = sp.Enqueue(replyID, ev.Segment)
			case ev.Kind == rpengine.EventEnd:
				err = fmt.Errorf("the reply ended: %v", ev.Err)
			}
			if err != nil && len(failed) == 0 {
				failed <- err
			}
		}
	})
	defer l.close(b)
	l.tcp.leave.Store(true) // the engine leaves the acks unread: its wakeups are not the game's
	check := func() {
		select {
		case err := <-failed:
			b.Fatal(err)
		default:
		}
	}

	runtime.GC() // the setup's garbage is not the floor's
	cpu, t0 := cpuNow(), time.Now()
	time.Sleep(speechSilence)
	floor := float64(cpuNow()-cpu) / float64(time.Millisecond) / time.Since(t0).Seconds()

	ctx := context.Background()
	chunks := int((speechSeconds*time.Second + chunkAudio - 1) / chunkAudio)
	total := time.Duration(chunks) * chunkAudio
	cpu, t0 = cpuNow(), time.Now()
	for i := 0; i < chunks; {
		if q := sp.Stats().Queued; q > speechAhead {
			time.Sleep(q - speechAhead) // until it is 2 s
			continue
		}
		if err := l.send(ctx, i); err != nil {
			b.Fatal(err)
		}
		check()
		i++
	}
	// The last chunk heard, within a device period.
	for {
		pos, ok := sp.Heard(replyID)
		left := total - pos.Heard
		if ok && left <= 2*devicePeriod {
			break
		}
		check()
		if time.Since(t0) > total+30*time.Second {
			b.Fatalf("after %v, %v of %v heard", time.Since(t0), pos.Heard, total)
		}
		time.Sleep(max(left-devicePeriod, devicePeriod))
	}
	used := cpuNow() - cpu
	b.ReportMetric(float64(used)/float64(time.Millisecond)/total.Seconds(), "cpu-ms/speech-s")
	b.ReportMetric(floor, "floor-ms/s")
	b.ReportMetric(total.Seconds(), "speech-s")
}
