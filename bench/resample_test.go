package bench

import (
	"math"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	qualityMu sync.Mutex
	qualities = map[string]Quality{}
)

// quality measures e once per process and rate (it is deterministic).
func quality(b *testing.B, e Engine, inRate int) Quality {
	qualityMu.Lock()
	defer qualityMu.Unlock()
	key := e.Name + "@" + strconv.Itoa(inRate)
	q, ok := qualities[key]
	if !ok {
		var err error
		if q, err = MeasureQuality(e, inRate, 16000); err != nil {
			b.Fatal(err)
		}
		qualities[key] = q
	}
	return q
}

// BenchmarkResampler converts 1 s of noise from 48 kHz and from 44.1 kHz
// to 16 kHz (the capture direction) in 10 ms chunks with audio.Resampler
// ("ours") and, with -tags srcref, the C references (speexdsp q3 and q5,
// soxr HQ, libsamplerate sinc best) through the same harness, and reports
// each one's quality (see Quality): alias_dB, alias10k_dB, pass_dB,
// thdn_dB, delay_ms and backlog_ms.
func BenchmarkResampler(b *testing.B) {
	for _, rate := range []struct {
		name string
		hz   int
	}{{"48k-16k", 48000}, {"44k1-16k", 44100}} {
		in := Noise(rate.hz, 1)
		step := rate.hz / 100
		for _, e := range append([]Engine{Ours}, RefEngines...) {
			b.Run(rate.name+"/"+e.Name, func(b *testing.B) {
				q := quality(b, e, rate.hz)
				c, err := e.New(rate.hz, 16000)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				out := make([]float32, 0, 32000)
				b.SetBytes(4 * int64(len(in)))
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					out = out[:0]
					for i := 0; i < len(in); i += step {
						out = c.Process(out, in[i:i+step])
					}
				}
				cpu.report(b)
				reportRealtime(b, time.Second)
				b.ReportMetric(q.AliasDB, "alias_dB")
				b.ReportMetric(q.Alias10DB, "alias10k_dB")
				b.ReportMetric(q.PassDB, "pass_dB")
				b.ReportMetric(q.THDNDB, "thdn_dB")
				b.ReportMetric(q.DelayMS, "delay_ms")
				b.ReportMetric(q.BacklogMS, "backlog_ms")
			})
		}
	}
}

// TestMeasureQuality checks the harness on converters whose figures are
// known: a decimator without a filter (no alias rejection, no delay) and
// one that also holds back 20 ms of output.
func TestMeasureQuality(t *testing.T) {
	t.Parallel()
	q, err := MeasureQuality(Engine{"drop", func(in, out int) (Converter, error) { return &decimator{}, nil }}, 48000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if q.AliasDB > 1 || q.PassDB > 0.01 || q.THDNDB < 120 || math.Abs(q.DelayMS) > 0.05 || math.Abs(q.BacklogMS) > 0.1 {
		t.Errorf("decimator: %+v, want ~0 dB alias rejection, flat passband, clean tone, no delay or backlog", q)
	}
	q, err = MeasureQuality(Engine{"late", func(in, out int) (Converter, error) { return &decimator{hold: 320}, nil }}, 48000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(q.BacklogMS-20) > 0.1 || math.Abs(q.DelayMS) > 0.05 {
		t.Errorf("holding decimator: %+v, want 20 ms backlog and no delay", q)
	}
	q, err = MeasureQuality(Ours, 48000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if q.AliasDB < 90 || q.PassDB > 0.1 || q.THDNDB < 100 || q.DelayMS < 0 || q.DelayMS > 5 || q.BacklogMS > 1 {
		t.Errorf("audio.Resampler: %+v, below the documented targets", q)
	}
	t.Logf("audio.Resampler 48k->16k: %+v", q)
}

// decimator keeps every third sample, holding back hold output samples.
type decimator struct {
	phase, hold int
	held        []float32
}

func (d *decimator) Process(dst, src []float32) []float32 {
	for _, v := range src {
		if d.phase%3 == 0 {
			d.held = append(d.held, v)
		}
		d.phase++
	}
	if n := len(d.held) - d.hold; n > 0 {
		dst = append(dst, d.held[:n]...)
		d.held = append(d.held[:0], d.held[n:]...)
	}
	return dst
}

func (d *decimator) Close() {}
