package bench

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// BenchmarkPlaybackLatencyPulse is BenchmarkPlaybackLatency through a real
// sound server (issue #35): the Speaker on an audio.Device opened on
// PulseAudio by miniaudio's backend, a null sink at 48 kHz, 10 ms periods.
// From a chunk's message in memory to its first sample taken by the
// device's callback, which the speaker's heard position shows (polled
// every 100 µs); the server's own buffer (about 40 ms here) comes after.
// It uses PULSE_SERVER's server, or starts a private one when pulseaudio
// is installed, and skips without either (or without cgo).
func BenchmarkPlaybackLatencyPulse(b *testing.B) {
	benchPulse(b)
	// A recorder on the monitor from before the device opens: on a null
	// sink that nothing records, miniaudio's stream could get no callback
	// (docs/audio.md).
	rec := exec.Command("parec", "-d", "@DEFAULT_MONITOR@", "--raw")
	if err := rec.Start(); err == nil {
		defer func() { _ = rec.Process.Kill(); _ = rec.Wait() }()
	}
	time.Sleep(300 * time.Millisecond)
	dev, err := audio.OpenDevice(nil)
	if err != nil {
		b.Skipf("no device on PulseAudio: %v", err)
	}
	defer dev.Close()
	time.Sleep(time.Second) // the stream settles
	sp, err := dev.NewSpeaker(nil)
	if err != nil {
		b.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(enginetest.Synthesize(0, float64(chunkSamples)/enginetest.SampleRate)[:chunkBytes])
	rng := rand.New(rand.NewPCG(35, 1))
	// play sends chunk i and returns when its first sample was heard; the
	// queue is emptied after it, untimed.
	play := func(i int) time.Duration {
		reply := fmt.Sprintf("p%d", i)
		msg := latencyChunk(reply, data)
		a := replyAssembler(b, reply)
		b.StartTimer()
		t0 := time.Now()
		if err := playChunk(a, sp, reply, msg); err != nil {
			b.Fatal(err)
		}
		for {
			if pos, ok := sp.Heard(reply); ok && pos.Heard > 0 {
				break
			}
			if time.Since(t0) > 2*time.Second {
				b.Fatal(errors.New("the first sample never played"))
			}
			time.Sleep(100 * time.Microsecond)
		}
		d := time.Since(t0)
		b.StopTimer()
		sp.Interrupt()
		for sp.Stats().Queued > 0 {
			time.Sleep(time.Millisecond)
		}
		return d
	}
	// A new stream's first sound waits for the server's prebuffer (0.2 to
	// 1.4 s, docs/audio.md): played once before the timed loop, or with a
	// short -benchtime that wait was the only sample (bench/run printed a
	// p50 and p99 of 617 ms).
	b.StopTimer()
	play(-1)
	b.StartTimer()
	var lat []time.Duration
	b.SetBytes(chunkBytes)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		time.Sleep(time.Duration(rng.Int64N(int64(devicePeriod))))
		lat = append(lat, play(i))
		b.StartTimer()
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_us")
	if err := dev.Err(); err != nil {
		b.Fatalf("Device.Err: %v", err)
	}
}

// benchPulse makes PULSE_SERVER name a server whose default sink is a
// null sink: the one it names, or a private one started for b and killed
// after it. It skips b when there is none.
func benchPulse(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("pactl"); err != nil {
		b.Skip("no PulseAudio: pactl is not installed (Debian: pulseaudio-utils)")
	}
	if s := os.Getenv("PULSE_SERVER"); s != "" && exec.Command("pactl", "-s", s, "info").Run() == nil {
		return
	}
	if _, err := exec.LookPath("pulseaudio"); err != nil {
		b.Skip("no PulseAudio: PULSE_SERVER is unset and pulseaudio is not installed")
	}
	dir, err := os.MkdirTemp("", "gamelink-pulse-")
	if err != nil {
		b.Fatal(err)
	}
	addr := "unix:" + filepath.Join(dir, "native")
	cmd := exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
		"-L", "module-native-protocol-unix socket="+filepath.Join(dir, "native")+" auth-anonymous=1",
		"-L", "module-null-sink sink_name=gamelink rate=48000")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir, "PULSE_RUNTIME_PATH="+dir)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); os.RemoveAll(dir) })
	for deadline := time.Now().Add(10 * time.Second); exec.Command("pactl", "-s", addr, "info").Run() != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("pulseaudio did not answer within 10 s")
		}
	}
	_ = exec.Command("pactl", "-s", addr, "set-default-sink", "gamelink").Run()
	_ = exec.Command("pactl", "-s", addr, "set-default-source", "gamelink.monitor").Run()
	b.Setenv("PULSE_SERVER", addr)
}
