//go:build cgo

package audio_test

// The real device path through a real sound server (issue #35): cgo,
// malgo, miniaudio's PulseAudio backend, a device at its own rate with
// real callbacks. They run in real time and are gated, as hardware tests
// are, by GAMELINK_PULSE=1. .ci/run's PulseAudio section starts a server
// whose default sink is a null sink and whose default source is that
// sink's monitor, sets PULSE_SERVER and GAMELINK_PULSE, and runs them on
// their own; without PULSE_SERVER they start a private server when the
// pulseaudio program is installed (Debian: pulseaudio pulseaudio-utils),
// and they skip, saying why, when there is none. They are not parallel:
// PULSE_SERVER is the process's environment. docs/audio.md says what they
// cover and what they do not.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// pulseSink is the null sink of the servers these tests start.
const pulseSink = "gamelink"

// pulseServer is a PulseAudio server: its address and default sink.
type pulseServer struct {
	addr, sink string
	dir        string    // a private server's runtime folder; "" for CI's
	cmd        *exec.Cmd // a private server's process
}

// usePulse returns the server of the test and sets PULSE_SERVER to it:
// the one PULSE_SERVER names if its default sink is a null sink, else a
// private one. It skips the test, saying why, when there is none.
func usePulse(t *testing.T) *pulseServer {
	t.Helper()
	gatePulse(t)
	if _, err := exec.LookPath("pactl"); err != nil {
		t.Skip("no PulseAudio reachable: pactl is not installed (Debian: pulseaudio-utils; .ci/run starts a server)")
	}
	if addr := os.Getenv("PULSE_SERVER"); addr != "" {
		if sink, err := nullDefaultSink(addr); err == nil {
			return &pulseServer{addr: addr, sink: sink}
		} else {
			t.Logf("PULSE_SERVER=%s is not usable (%v): starting a private server", addr, err)
		}
	}
	return startPulse(t)
}

// gatePulse skips the test unless GAMELINK_PULSE is set.
func gatePulse(t *testing.T) {
	t.Helper()
	if os.Getenv("GAMELINK_PULSE") == "" {
		t.Skip("the real sound server tests run with GAMELINK_PULSE=1 (.ci/run's PulseAudio section; docs/audio.md)")
	}
}

// nullDefaultSink returns the default sink of the server at addr, if it
// is a null sink (a real one would be heard, and records other programs).
func nullDefaultSink(addr string) (string, error) {
	out, err := exec.Command("pactl", "-s", addr, "get-default-sink").Output()
	if err != nil {
		return "", fmt.Errorf("pactl get-default-sink: %v", err)
	}
	sink := strings.TrimSpace(string(out))
	list, err := exec.Command("pactl", "-s", addr, "list", "short", "sinks").Output()
	if err != nil {
		return "", fmt.Errorf("pactl list sinks: %v", err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == sink && f[2] == "module-null-sink.c" {
			return sink, nil
		}
	}
	return "", fmt.Errorf("the default sink %q is not a null sink", sink)
}

// startPulse starts a private server with a null sink as its default sink
// and its monitor as default source; the test's cleanup kills it.
func startPulse(t *testing.T) *pulseServer {
	t.Helper()
	gatePulse(t)
	if _, err := exec.LookPath("pulseaudio"); err != nil {
		t.Skip("no PulseAudio reachable: PULSE_SERVER is unset and pulseaudio is not installed (Debian: pulseaudio pulseaudio-utils)")
	}
	dir, err := os.MkdirTemp("", "gamelink-pulse-") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &pulseServer{addr: "unix:" + filepath.Join(dir, "native"), sink: pulseSink, dir: dir}
	p.start(t)
	t.Cleanup(p.kill)
	t.Setenv("PULSE_SERVER", p.addr)
	return p
}

// start (re)starts a private server in p.dir and waits until it answers.
func (p *pulseServer) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
		"--log-target=file:"+filepath.Join(p.dir, "log"),
		"-L", "module-native-protocol-unix socket="+filepath.Join(p.dir, "native")+" auth-anonymous=1",
		"-L", "module-null-sink sink_name="+pulseSink+" rate=48000")
	cmd.Env = append(os.Environ(), "HOME="+p.dir, "XDG_RUNTIME_DIR="+p.dir, "PULSE_RUNTIME_PATH="+p.dir)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pulseaudio: %v", err)
	}
	p.cmd = cmd
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("pactl", "-s", p.addr, "info").Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
			t.Fatalf("pulseaudio did not answer within 10 s; its log:\n%s", log)
		}
	}
	for _, args := range [][]string{{"set-default-sink", pulseSink}, {"set-default-source", pulseSink + ".monitor"}} {
		if out, err := exec.Command("pactl", append([]string{"-s", p.addr}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("pactl %v: %v: %s", args, err, out)
		}
	}
	// Real time for all its threads, as .ci/run gives its server: the
	// server drops its main thread back to normal scheduling by itself,
	// and on a loaded machine that thread waited for a core long enough
	// for the stream to run dry (docs/audio.md).
	if out, err := exec.Command("chrt", "-f", "-a", "-p", "20", fmt.Sprint(cmd.Process.Pid)).CombinedOutput(); err != nil {
		t.Logf("the server runs without real-time scheduling (chrt: %v: %s): it may glitch on a loaded machine", err, bytes.TrimSpace(out))
	}
}

// kill kills a private server (SIGKILL: a crash, not a shutdown).
func (p *pulseServer) kill() {
	if p.cmd != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		p.cmd = nil
	}
}

// monitor records the server's default sink through parec, as 48 kHz
// stereo float32, until stop.
type monitor struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	data []float32 // interleaved
	done chan struct{}
}

func (p *pulseServer) record(t *testing.T) *monitor {
	t.Helper()
	cmd := exec.Command("parec", "-s", p.addr, "-d", p.sink+".monitor", "--raw", "--format=float32le",
		"--rate=48000", "--channels=2", "--latency-msec=20")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("no parec (pulseaudio-utils): %v", err)
	}
	m := &monitor{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		buf := make([]byte, 8192)
		for {
			n, err := io.ReadFull(out, buf)
			m.mu.Lock()
			for i := 0; i+4 <= n && len(m.data) < 60*48000*2; i += 4 { // bounded: 60 s
				m.data = append(m.data, math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
			}
			m.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { m.stop() })
	// parec records from when its stream is set up: wait for it.
	for deadline := time.Now().Add(5 * time.Second); m.frames() < 4800; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("parec recorded nothing in 5 s")
		}
	}
	return m
}

func (m *monitor) frames() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.data) / 2
}

// since returns each channel of what was recorded from frame from on.
func (m *monitor) since(from int) (left, right []float32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 2 * from; i+1 < len(m.data); i += 2 {
		left, right = append(left, m.data[i]), append(right, m.data[i+1])
	}
	return left, right
}

// waitQuiet waits until the last 100 ms recorded are silent: what played
// before (the warm-up tone, the case before) has left the server, so that
// a recording from now on holds only what plays next. Issue #35: the
// warm-up tone's last 40 ms, still in the server when its speaker was
// done, came first in the left case's window and were taken for the onset
// of the reply, and its right channel was not silent.
func (m *monitor) waitQuiet(t *testing.T) {
	t.Helper()
	waitFor(t, 5*time.Second, "the monitor to fall silent", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.data) < 2*4800 {
			return false
		}
		for _, v := range m.data[len(m.data)-2*4800:] {
			if math.Abs(float64(v)) > 1e-4 {
				return false
			}
		}
		return true
	})
}

// stop ends the recording.
func (m *monitor) stop() {
	if m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
	}
	<-m.done
	_ = m.cmd.Wait()
}

// within fails the test when f does not return within d: no audio call
// may hang, whatever the sound server does.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// resample converts mono samples with the package's own resampler, whole,
// the tail included.
func resample(t *testing.T, x []float32, from, to int) []float32 {
	t.Helper()
	if from == to {
		return x
	}
	r, err := audio.NewResampler(from, to, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Append(nil, x)
	if err != nil {
		t.Fatal(err)
	}
	return r.Flush(out)
}

// match is where want lies in got and how well: the lag of the
// cross-correlation peak, the gain (least squares), the normalised
// correlation at the peak, and the longest run of got that departs from
// gain*want by more than a tenth of want's RMS, in frames.
type match struct {
	lag          int
	gain, corr   float64
	longestGap   int
	gotRMS, rms  float64 // of got and want over the aligned span
	gotSpanStart int
}

// align finds want in got: first roughly, from where each rises above a
// threshold, then exactly, by the correlation peak within 50 ms of that.
func align(got, want []float32, rate int) match {
	onset := func(x []float32) int {
		peak := 0.0
		for _, v := range x {
			peak = max(peak, math.Abs(float64(v)))
		}
		for i, v := range x {
			if math.Abs(float64(v)) > peak/20 {
				return i
			}
		}
		return 0
	}
	rough := onset(got) - onset(want)
	span := min(len(want), rate/4) // the first quarter second decides the lag
	best, bestLag := math.Inf(-1), rough
	for lag := rough - rate/20; lag <= rough+rate/20; lag++ {
		var s float64
		for i := 0; i < span; i++ {
			if j := lag + i; j >= 0 && j < len(got) {
				s += float64(got[j]) * float64(want[i])
			}
		}
		if s > best {
			best, bestLag = s, lag
		}
	}
	m := match{lag: bestLag, gotSpanStart: bestLag}
	var gw, ww, gg float64
	for i, w := range want {
		g := 0.0
		if j := bestLag + i; j >= 0 && j < len(got) {
			g = float64(got[j])
		}
		gw, ww, gg = gw+g*float64(w), ww+float64(w)*float64(w), gg+g*g
	}
	m.gain, m.corr = gw/ww, gw/math.Sqrt(ww*gg)
	m.rms, m.gotRMS = math.Sqrt(ww/float64(len(want))), math.Sqrt(gg/float64(len(want)))
	run := 0
	for i, w := range want {
		g := 0.0
		if j := bestLag + i; j >= 0 && j < len(got) {
			g = float64(got[j])
		}
		if math.Abs(g-m.gain*float64(w)) > 0.1*m.rms*m.gain {
			run++
			m.longestGap = max(m.longestGap, run)
		} else {
			run = 0
		}
	}
	return m
}

func db(x float64) float64 { return 20 * math.Log10(x) }

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// voicedReply asks enginetest, over loopback WebSocket, for a spoken reply
// of the given sentences and plays it on sp as the events bring it, as a
// game does. It returns the reply's samples as float32 at 44.1 kHz.
func voicedReply(t *testing.T, sp *audio.Speaker, sentences ...string) (string, []float32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	eng, err := enginetest.Dial(ctx, server.SocketURL(), &enginetest.Options{
		Responder: func(enginetest.Request) enginetest.Script { return enginetest.Script{Sentences: sentences} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := server.WaitSession(ctx); err != nil {
		t.Fatal(err)
	}
	ari, _ := card.New(card.Data{Name: "Ari", Description: "A scout."})
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "audio-test", CharacterID: "ari", Card: ari, Text: "Hello!", Voice: "F1"})
	if err != nil {
		t.Fatal(err)
	}
	var samples []float32
	for ev := range reply.Events() {
		switch ev.Kind {
		case rpengine.EventSegment:
			if ev.Segment.SampleRate != enginetest.SampleRate {
				t.Fatalf("segment at %d Hz", ev.Segment.SampleRate)
			}
			samples = audio.AppendFloat32(samples, ev.Segment.Samples)
			if err := sp.Enqueue(reply.RequestID(), ev.Segment); err != nil {
				t.Fatal(err)
			}
		case rpengine.EventAudioEnd:
			if err := sp.End(reply.RequestID()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := reply.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return reply.RequestID(), samples
}

// Issue #35: a reply streamed from enginetest through a Speaker on the
// real device comes out of the sink's monitor whole: its samples after
// resampling (cross-correlation peak), with no gap longer than one device
// period, at the level Volume says (within 0.5 dB), in the channel Pan
// says; and the speaker's heard position ends within one period of the
// real duration.
func TestPulse_playback(t *testing.T) {
	srv := usePulse(t)
	// The monitor is recorded from before the device opens: on a null sink
	// that nothing records, miniaudio's PulseAudio stream on a server that
	// had had streams before got no callback until a recorder connected
	// (docs/audio.md).
	mon := srv.record(t)
	// A 40 ms period rather than the default 10 ms: miniaudio asks the
	// server for a buffer of one period (tlength; docs/audio.md), and 40 ms
	// leaves room for a client woken late on a loaded machine.
	const periodTime = 40 * time.Millisecond
	dev, err := audio.OpenDevice(&audio.DeviceOptions{Period: periodTime})
	if err != nil {
		t.Fatalf("OpenDevice on PulseAudio: %v", err)
	}
	defer func() { within(t, 5*time.Second, "Device.Close", func() { _ = dev.Close() }) }()
	warmUp(t, dev)
	rate := dev.SampleRate()
	period := int(int64(rate) * int64(periodTime) / int64(time.Second))
	t.Logf("device: %d Hz, %d channels", rate, dev.Channels())
	for _, c := range []struct {
		name        string
		volume, pan float32
	}{{"left", 1, -1}, {"centre at half volume", 0.5, 0}, {"right", 0.8, 1}} {
		t.Run(c.name, func(t *testing.T) {
			sp, err := dev.NewSpeaker(&audio.SpeakerOptions{Volume: c.volume, Pan: c.pan})
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			mon.waitQuiet(t)
			from := mon.frames()
			id, reply := voicedReply(t, sp, "The lantern is lit.", "Come in from the rain.")
			start := time.Now()
			for !sp.Position().Done {
				if time.Since(start) > 20*time.Second {
					t.Fatalf("the reply did not end: %+v", sp.Position())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // the server's own latency
			left, right := mon.since(from)
			want := resample(t, reply, enginetest.SampleRate, 48000)
			if dir := os.Getenv("PULSE_DUMP"); dir != "" {
				writeWAV(t, filepath.Join(dir, c.name+"-left.wav"), 48000, left)
				writeWAV(t, filepath.Join(dir, c.name+"-want.wav"), 48000, want)
			}
			heard, _ := sp.Heard(id)
			real := time.Duration(len(resample(t, reply, enginetest.SampleRate, rate))) * time.Second / time.Duration(rate)
			t.Logf("reply %v; heard %v; monitor %d frames", time.Duration(len(reply))*time.Second/enginetest.SampleRate, heard.Heard, len(left))
			if d := heard.Heard - real; d < -periodTime || d > periodTime {
				t.Errorf("heard %v, the reply lasts %v: more than one period apart", heard.Heard, real)
			}
			for ch, got := range map[string][]float32{"left": left, "right": right} {
				gain := float64(c.volume) * float64(min(1, 1-c.pan)) // the pan law of Speaker.SetPan
				if ch == "right" {
					gain = float64(c.volume) * float64(min(1, 1+c.pan))
				}
				if gain == 0 {
					if r := rms(got); r > 1e-4 {
						t.Errorf("%s channel: RMS %.1f dB, want silence (pan %v)", ch, db(r), c.pan)
					}
					continue
				}
				m := align(got, want, 48000)
				t.Logf("%s: lag %d, correlation %.6f, gain %.2f dB (want %.2f), longest gap %d frames", ch, m.lag, m.corr, db(m.gain), db(gain), m.longestGap)
				if m.corr < 0.999 {
					t.Errorf("%s channel: correlation %.6f with the reply, want >= 0.999", ch, m.corr)
				}
				if d := db(m.gain) - db(gain); math.Abs(d) > 0.5 {
					t.Errorf("%s channel: level %.2f dB, Volume says %.2f dB", ch, db(m.gain), db(gain))
				}
				if m.longestGap > period {
					t.Errorf("%s channel: a gap of %d frames, longer than a %d-frame period", ch, m.longestGap, period)
				}
			}
		})
	}
	if err := dev.Err(); err != nil {
		t.Errorf("Device.Err: %v", err)
	}
}

// warmUp plays 3 s of a tone on dev and waits until it has played. Here,
// the first seconds a new stream played on the null sink came out of the
// monitor with gaps (up to 6 ms, fewer in each run) while later replies
// were exact; what is measured is the stream once settled, and that first
// seconds are left out is said in docs/audio.md.
func warmUp(t *testing.T, dev *audio.Device) {
	t.Helper()
	sp, err := dev.NewSpeaker(&audio.SpeakerOptions{Volume: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	tone := make([]int16, 3*44100)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/44100))
	}
	if err := sp.Enqueue("warm-up", stream.Segment{SampleRate: 44100, Samples: tone}); err != nil {
		t.Fatal(err)
	}
	_ = sp.End("warm-up")
	waitFor(t, 10*time.Second, "the warm-up tone to play", func() bool { return sp.Position().Done })
}

// writeWAV writes mono samples as a 16-bit WAV file for paplay.
func writeWAV(t *testing.T, name string, rate int, x []float32) {
	t.Helper()
	b, err := audio.AppendWAV(nil, rate, 1, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue #35: a known signal played into the sink (paplay) is captured by
// the Recorder from the monitor, the default source, as 16 kHz mono: its
// content matches the signal resampled to 16 kHz (correlation), the level
// is right (within 0.5 dB), and a voice keeps its spectrum (band levels
// within 1 dB).
func TestPulse_capture(t *testing.T) {
	srv := usePulse(t)
	if _, err := exec.LookPath("paplay"); err != nil {
		t.Skip("no paplay (pulseaudio-utils)")
	}
	dir := t.TempDir()
	const rate = 48000
	sweep := make([]float32, 2*rate) // 2 s, 100 Hz to 6 kHz (the passband), -6 dBFS
	f0, f1 := 100.0, 6000.0
	k := math.Log(f1/f0) / 2
	for i := range sweep {
		s := float64(i) / rate
		sweep[i] = float32(0.5 * math.Sin(2*math.Pi*f0*(math.Exp(k*s)-1)/k))
	}
	for i := range rate / 100 { // a 10 ms fade-in, after 100 ms of silence
		sweep[i] *= float32(i) / float32(rate/100)
	}
	sweep = append(make([]float32, rate/10), sweep...)
	writeWAV(t, filepath.Join(dir, "sweep.wav"), rate, sweep)
	cases := []struct {
		name, file string
		signal     []float32
		rate       int
		minCorr    float64
	}{{"sweep", "sweep.wav", sweep, rate, 0.999}}
	if _, err := exec.LookPath("espeak-ng"); err == nil {
		voice := filepath.Join(dir, "voice.wav")
		if out, err := exec.Command("espeak-ng", "-w", voice, "Welcome to the tavern. The fire is warm tonight.").CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng: %v: %s", err, out)
		}
		f, err := os.Open(voice)
		if err != nil {
			t.Fatal(err)
		}
		w, err := audio.ReadWAV(f, 0)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		// At the sink's rate, so that the server does not resample it.
		v48 := resample(t, w.Samples, w.SampleRate, rate)
		g := 0.9 / float32(peak(v48))
		for i := range v48 {
			v48[i] *= g
		}
		writeWAV(t, voice, rate, v48)
		cases = append(cases, struct {
			name, file string
			signal     []float32
			rate       int
			minCorr    float64
		}{"voice", "voice.wav", v48, rate, 0.999})
	} else {
		t.Log("no espeak-ng: the recorded voice case is left out (Debian: espeak-ng)")
	}
	rec, err := audio.OpenRecorder(nil)
	if err != nil {
		t.Fatalf("OpenRecorder on PulseAudio: %v", err)
	}
	defer func() { within(t, 5*time.Second, "Recorder.Close", func() { _ = rec.Close() }) }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := rec.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if out, err := exec.Command("paplay", "-s", srv.addr, "-d", srv.sink, filepath.Join(dir, c.file)).CombinedOutput(); err != nil {
				t.Fatalf("paplay: %v: %s", err, out)
			}
			time.Sleep(300 * time.Millisecond)
			var got *audio.Recording
			within(t, 3*time.Second, "Recorder.Stop", func() { got, err = rec.Stop() })
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			mono := audio.AppendFloat32(nil, got.Samples)
			// The 16 kHz grid falls on every third 48 kHz sample: which
			// one depends on where the capture started. The signal is
			// resampled at each of the three phases and the best kept.
			var want []float32
			var m match
			for phase := range 3 {
				w := resample(t, c.signal[phase:], c.rate, audio.CaptureRate)
				if pm := align(mono, w, audio.CaptureRate); want == nil || pm.corr > m.corr {
					want, m = w, pm
				}
			}
			if os.Getenv("PULSE_DUMP") != "" {
				var bad []int
				for i, w := range want {
					if j := m.lag + i; j >= 0 && j < len(mono) && math.Abs(float64(mono[j])-m.gain*float64(w)) > 0.1*m.rms*m.gain {
						bad = append(bad, i)
					}
				}
				t.Logf("bad samples (%d): %v", len(bad), bad[:min(len(bad), 200)])
			}
			t.Logf("captured %v; correlation %.6f, level %.2f dB, longest gap %d samples", got.Duration(), m.corr, db(m.gain), m.longestGap)
			if m.corr < c.minCorr {
				t.Errorf("correlation %.6f with the signal, want >= %v", m.corr, c.minCorr)
			}
			if math.Abs(db(m.gotRMS/m.rms)) > 0.5 {
				t.Errorf("level %.2f dB from the signal's, want within 0.5 dB", db(m.gotRMS/m.rms))
			}
			// The spectrum, band by band, over the aligned span.
			aligned := make([]float32, len(want))
			for i := range aligned {
				if j := m.lag + i; j >= 0 && j < len(mono) {
					aligned[i] = mono[j]
				}
			}
			for _, b := range [][2]float64{{100, 500}, {500, 1000}, {1000, 2000}, {2000, 4000}, {4000, 6000}} {
				g, w := bandRMS(aligned, b, audio.CaptureRate), bandRMS(want, b, audio.CaptureRate)
				if w > 1e-4 && math.Abs(db(g/w)) > 1 {
					t.Errorf("band %v-%v Hz: %.2f dB from the signal's, want within 1 dB", b[0], b[1], db(g/w))
				}
			}
		})
	}
}

func peak(x []float32) float64 {
	p := 0.0
	for _, v := range x {
		p = max(p, math.Abs(float64(v)))
	}
	return p
}

// bandRMS is the RMS of x in a frequency band, by a DFT at 10 Hz steps
// (Goertzel) over the whole signal: crude, and enough to compare two.
func bandRMS(x []float32, band [2]float64, rate int) float64 {
	var sum float64
	n := 0
	for f := band[0]; f < band[1]; f += 10 {
		w := 2 * math.Cos(2*math.Pi*f/float64(rate))
		var s1, s2 float64
		for _, v := range x {
			s1, s2 = float64(v)+w*s1-s2, s1
		}
		sum += s1*s1 + s2*s2 - w*s1*s2
		n++
	}
	return math.Sqrt(sum / float64(n) / float64(len(x)))
}

// Issue #35: the sound server killed during playback and during capture.
// The Device says the device was lost through Err (ErrDeviceLost), no call
// hangs, speech goes on silently, and once the server is back the Device
// plays through it again by itself; the Recorder's Stop says the
// microphone was lost, and a Start once the server is back records. The
// server here is always a private one: the test kills it.
func TestPulse_lostDevice(t *testing.T) {
	srv := startPulse(t)
	srv.record(t) // see TestPulse_playback
	dev, err := audio.OpenDevice(nil)
	if err != nil {
		t.Fatalf("OpenDevice on PulseAudio: %v", err)
	}
	defer func() { within(t, 5*time.Second, "Device.Close", func() { _ = dev.Close() }) }()
	sp, err := dev.NewSpeaker(nil)
	if err != nil {
		t.Fatal(err)
	}
	tone := make([]int16, 20*44100)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/44100))
	}
	if err := sp.Enqueue("r", segmentOf(tone)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if err := dev.Err(); err != nil {
		t.Fatalf("Err before the kill: %v", err)
	}
	srv.kill()
	waitFor(t, 5*time.Second, "Device.Err to say the device was lost", func() bool { return errors.Is(dev.Err(), audio.ErrDeviceLost) })
	t.Logf("after the kill: %v", dev.Err())
	within(t, time.Second, "Speaker.Enqueue while lost", func() { err = sp.Enqueue("r", segmentOf(tone[:4410])) })
	if err != nil {
		t.Errorf("Enqueue while lost: %v", err)
	}
	h := sp.Position().Heard
	time.Sleep(500 * time.Millisecond)
	if d := sp.Position().Heard - h; d < 300*time.Millisecond {
		t.Errorf("while lost the speaker advanced %v in 500 ms, want it to go on in real time", d)
	}
	srv.start(t)
	mon := srv.record(t)
	waitFor(t, 10*time.Second, "Device.Err to clear once the server is back", func() bool { return dev.Err() == nil })
	from := mon.frames()
	time.Sleep(500 * time.Millisecond)
	left, _ := mon.since(from)
	if r := rms(left); db(r) < -30 {
		t.Errorf("after the server came back the monitor has %.1f dB RMS, want the tone (-15 dB)", db(r))
	}

	rec, err := audio.OpenRecorder(nil)
	if err != nil {
		t.Fatalf("OpenRecorder: %v", err)
	}
	defer func() { within(t, 5*time.Second, "Recorder.Close", func() { _ = rec.Close() }) }()
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	srv.kill()
	time.Sleep(2500 * time.Millisecond)
	within(t, 3*time.Second, "Recorder.Stop after the kill", func() { _, err = rec.Stop() })
	if !errors.Is(err, audio.ErrDeviceLost) {
		t.Fatalf("Stop after the kill: %v, want ErrDeviceLost", err)
	}
	t.Logf("Stop after the kill: %v", err)
	within(t, 3*time.Second, "Recorder.Start while the server is down", func() { err = rec.Start() })
	if !errors.Is(err, audio.ErrDeviceLost) {
		t.Fatalf("Start while the server is down: %v, want ErrDeviceLost", err)
	}
	srv.start(t)
	srv.record(t)
	within(t, 5*time.Second, "Recorder.Start once the server is back", func() { err = rec.Start() })
	if err != nil {
		t.Fatalf("Start once the server is back: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	var got *audio.Recording
	within(t, 3*time.Second, "Recorder.Stop", func() { got, err = rec.Stop() })
	if err != nil && !errors.Is(err, audio.ErrSilentInput) {
		t.Fatalf("Stop once the server is back: %v", err)
	}
	if got.Duration() < 500*time.Millisecond {
		t.Errorf("recorded %v in 1.5 s once the server was back", got.Duration())
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

var segments int // the index of the next segment of segmentOf

// segmentOf makes the next 44.1 kHz segment of the one reply.
func segmentOf(s []int16) stream.Segment {
	segments++
	return stream.Segment{Index: segments - 1, SampleRate: 44100, Samples: s}
}
