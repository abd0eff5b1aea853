// Command report reads Go benchmark output (several -count runs, plus the
// Node.js reference lines of bench/node) and prints one markdown table:
// the median of each benchmark, its spread, and its ratio to the
// references measured in the same run.
//
// usage: go run ./bench/report FILE...
package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its
// values per unit, one per run.
type results map[string]map[string][]float64

var procSuffix = regexp.MustCompile(`-\d+$`)

func parse(r io.Reader, res results) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		if res[name] == nil {
			res[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("%s: bad value %q", name, f[i])
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
	}
	return sc.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else if n > 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return math.NaN()
}

func (r results) get(name, unit string) (float64, bool) {
	v := r[name][unit]
	if len(v) == 0 {
		return 0, false
	}
	return median(v), true
}

// cmp is a comparison shown on a row: time(ref) / time(row).
type cmp struct {
	ref, label string
	target     float64 // the row must be at least this many times faster; 0: none
	slower     float64 // or at most this many times slower; 0: none
}

type row struct {
	name, what, variant string
	cmps                []cmp
	maxAlloc            float64 // allocated bytes per op at most this many times card_B; 0: none
	loop                bool    // the loopback targets apply (loopTargets)
	growth              string  // a scaling row at 16n: the row at n, for t(16n)/t(n)
}

// The loopback targets of issue #24: allocations per chunk, p50 latency,
// chunks per second back to back.
const (
	loopMaxAllocs = 10
	loopMaxP50us  = 100
	loopMinMsgs   = 15000
)

// speechMaxMs is issue #31's goal for the CPU time per second of speech.
const speechMaxMs = 2

func rows() []row {
	var rs []row
	maxAlloc := map[string]float64{"large": 2} // the large card allocates at most twice its size
	for _, c := range []string{"small", "typical", "large"} {
		p := "Hash/" + c + "/"
		what := "card hash, " + c
		rs = append(rs,
			// Retired target (issue #30): cold Parse within 3x of SHA-256 alone.
			row{p + "cold", what, "**ours, cold** (card.Parse, new bytes)", []cmp{{ref: p + "jcs", label: "jcs+sha256", target: 6}, {ref: p + "node", label: "Node canonicalize", target: 3}, {ref: p + "sha256", label: "sha256 alone (floor)"}}, maxAlloc[c], false, ""},
			row{p + "hash", what, "**ours, parsed** (Card.Hash: the digest is kept)", []cmp{{ref: p + "cold", label: "cold", target: 1000}}, 0, false, ""},
			row{name: p + "jcs", what: what, variant: "ref: jcs.Transform + sha256"},
			row{name: p + "node", what: what, variant: "ref: Node.js canonicalize + crypto"},
			row{name: p + "sha256", what: what, variant: "floor: sha256 of canonical bytes"},
		)
	}
	rs = append(rs,
		row{name: "Plan/typical/one-field-edit", what: "transfer planning", variant: "**ours**: Plan, one-field edit (diff + verify)", cmps: []cmp{{ref: "Hash/typical/cold", label: "a cold hash", target: 2}}},
		row{name: "Plan/typical/unchanged", what: "transfer planning", variant: "ours: Plan, unchanged card (reference)"},
		row{name: "ReplyPCM/decoder", what: "reply PCM path, per 32 KiB chunk", variant: "**ours**: stream.Assembler.Push", cmps: []cmp{{ref: "ReplyPCM/naive", label: "naive", target: 6}, {ref: "ReplyPCM/base64", label: "base64 alone (floor)", slower: 1.3}}},
		row{name: "ReplyPCM/naive", what: "reply PCM path, per 32 KiB chunk", variant: "ref: encoding/json struct + base64.Decode"},
		row{name: "ReplyPCM/base64", what: "reply PCM path, per 32 KiB chunk", variant: "floor: base64 decode of the data"},
		row{name: "Capture", what: "capture, 5 s push to talk", variant: "**ours**: 48 kHz stereo f32 → base64 16 kHz s16le"},
	)
	for _, rate := range []struct{ name, what string }{{"48k-16k", "resampler 48 → 16 kHz"}, {"44k1-16k", "resampler 44.1 → 16 kHz"}} {
		p := "Resampler/" + rate.name + "/"
		g := "ResamplerPureGo/" + rate.name + "/"
		rs = append(rs,
			// Faster than soxr HQ is a retired target (issue #30): its ratio is still printed.
			row{name: p + "ours", what: rate.what, variant: "**ours**: audio.Resampler", cmps: []cmp{{ref: p + "soxr-hq", label: "soxr HQ"}, {ref: p + "speexdsp-q5", label: "speexdsp q5", target: 1}, {ref: p + "speexdsp-q3", label: "speexdsp q3"}, {ref: p + "lsr-best", label: "libsamplerate best"}}},
			row{name: g + "ours", what: rate.what, variant: "**ours, pure Go** (-tags purego, own process)", cmps: []cmp{{ref: g + "speexdsp-q5", label: "speexdsp q5 in that process", target: 1}}},
			row{name: p + "speexdsp-q3", what: rate.what, variant: "ref: speexdsp q3"},
			row{name: p + "speexdsp-q5", what: rate.what, variant: "ref: speexdsp q5"},
			row{name: g + "speexdsp-q5", what: rate.what, variant: "ref: speexdsp q5 (the pure-Go process)"},
			row{name: p + "soxr-hq", what: rate.what, variant: "ref: soxr HQ"},
			row{name: p + "lsr-best", what: rate.what, variant: "ref: libsamplerate sinc best"},
		)
	}
	rs = append(rs,
		row{name: "PlaybackLatency", what: "playback latency, game-added", variant: "**ours**: chunk read → first sample in the device callback"},
		row{name: "PlaybackLatencyPulse", what: "playback latency, game-added", variant: "ours, through PulseAudio (a real Device, miniaudio's backend, null sink): chunk read → first sample in its callback"},
		row{name: "Loopback/latency", what: "end to end, loopback WebSocket", variant: "**ours** + the fake engine (enginetest, its costs included): chunk sent → samples queued", loop: true},
		row{name: "Loopback/throughput", what: "end to end, loopback WebSocket", variant: "**ours** + the fake engine (enginetest, its costs included): chunks back to back", loop: true},
		row{name: "Loopback/raw-latency", what: "end to end, loopback WebSocket", variant: "**ours**, the game's path alone (raw client: ready frames, acks dropped unread): chunk sent → samples queued", loop: true},
		row{name: "Loopback/raw-throughput", what: "end to end, loopback WebSocket", variant: "**ours**, the game's path alone (raw client): chunks back to back", loop: true},
		row{name: "SpeechCPU", what: "a voiced reply, whole", variant: "**ours**: 60 s of speech over loopback WebSocket, a Speaker on a Null Device (48 kHz stereo, 10 ms periods), in real time"},
	)
	return rs
}

func run(files []string, w io.Writer) error {
	res := results{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		err = parse(fh, res)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	fmt.Fprintln(w, "| what | variant | time/op ±MAD; CPU time/op | speed | allocs/op | comparison (same run) | alias dB ≥9k (10k) | passband ±dB | THD+N dB | delay ms | backlog ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range slices.Concat(rows(), scaleRows(res)) {
		t, ok := res.get(r.name, "ns/op")
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.what, r.variant, timeCell(res, r.name, t),
			speedCell(res, r.name), allocCell(res, r), cmpCell(res, r, t), qualityCells(res, r.name))
	}
	return nil
}

// maxGrowth is the scaling target (issue #31): 16 times the input takes
// at most 20 times as long (linear, or n log n).
const maxGrowth = 20

// scaleSub matches the sub-benchmark of a scaling benchmark: any
// BenchmarkScale<Name> with sub-benchmarks n=<N> (at n, 4n and 16n).
var scaleSub = regexp.MustCompile(`^(Scale[^/]*(?:/.*)?)/n=(\d+)$`)

// scaleRows returns a row group for each scaling benchmark in res: one
// row per n, the one at 16n (when there is one) with t(16n)/t(n).
func scaleRows(res results) []row {
	sizes := map[string][]int{}
	for name := range res {
		if m := scaleSub.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[2])
			sizes[m[1]] = append(sizes[m[1]], n)
		}
	}
	var rs []row
	for _, g := range slices.Sorted(maps.Keys(sizes)) {
		ns := slices.Sorted(slices.Values(sizes[g]))
		for _, n := range ns {
			r := row{name: g + "/n=" + strconv.Itoa(n), what: "scaling: " + strings.TrimPrefix(g, "Scale"), variant: "n=" + strconv.Itoa(n)}
			if n == 16*ns[0] {
				r.growth = g + "/n=" + strconv.Itoa(ns[0])
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// growthCell is t(16n)/t(n) for row r and the row at n, with the target.
func growthCell(res results, r row, t float64) string {
	t1, ok := res.get(r.growth, "ns/op")
	if !ok {
		return ""
	}
	verdict := func(x float64) string {
		if x <= maxGrowth {
			return "met"
		}
		return "NOT met"
	}
	g := t / t1
	s := fmt.Sprintf("t(16n)/t(n) = %.1f", g)
	cpuVerdict := ""
	if c, ok := res.get(r.name, "cpu-ns/op"); ok {
		if c1, ok := res.get(r.growth, "cpu-ns/op"); ok && c1 > 0 {
			s += fmt.Sprintf(" (CPU time: %.1f)", c/c1)
			cpuVerdict = ", CPU " + verdict(c/c1)
		}
	}
	return s + fmt.Sprintf(" (target ≤%d: wall %s%s)", maxGrowth, verdict(g), cpuVerdict)
}

func timeCell(res results, name string, t float64) string {
	v := res[name]["ns/op"]
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - t)
	}
	s := fmt.Sprintf("%s ±%.0f%% (n=%d)", dur(t), median(dev)/t*100, len(v))
	if c, ok := res.get(name, "cpu-ns/op"); ok {
		s += "; " + dur(c)
	}
	return s
}

func dur(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.3g ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.3g s", ns/1e9)
}

func speedCell(res results, name string) string {
	var parts []string
	if v, ok := res.get(name, "p50_us"); ok {
		p99, _ := res.get(name, "p99_us")
		parts = append(parts, fmt.Sprintf("p50 %s, p99 %s", dur(v*1e3), dur(p99*1e3)))
	}
	if v, ok := res.get(name, "msgs/s"); ok {
		parts = append(parts, fmt.Sprintf("%.0f msgs/s", v))
	}
	if v, ok := res.get(name, "x_realtime"); ok {
		parts = append(parts, fmt.Sprintf("%.0f× realtime", v))
	} else if v, ok := res.get(name, "MB/s"); ok {
		parts = append(parts, fmt.Sprintf("%.0f MB/s", v))
	}
	if v, ok := res.get(name, "patch_B"); ok {
		if s, ok := res.get(name, "snapshot_B"); ok {
			parts = append(parts, fmt.Sprintf("patch %.0f B vs snapshot %.0f B", v, s))
		} else {
			parts = append(parts, fmt.Sprintf("patch %.0f B", v))
		}
	}
	if v, ok := res.get(name, "speech-s"); ok {
		parts = append(parts, fmt.Sprintf("%.1f s of speech", v))
	}
	if v, ok := res.get(name, "work_us"); ok {
		p, _ := res.get(name, "period_ms")
		parts = append(parts, fmt.Sprintf("game's work %s, device period %s", dur(v*1e3), dur(p*1e6)))
	}
	return strings.Join(parts, "; ")
}

func allocCell(res results, r row) string {
	name := r.name
	a, ok := res.get(name, "allocs/op")
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%.0f", a)
	if c, ok := res.get(name, "allocs/chunk"); ok {
		s = fmt.Sprintf("%.2f per chunk", c)
	}
	b, ok := res.get(name, "B/op")
	if ok {
		s += fmt.Sprintf(" (%s)", bytes(b))
	}
	if card, cok := res.get(name, "card_B"); ok && cok && card > 0 && r.maxAlloc > 0 {
		x, over := b/card, b-r.maxAlloc*card
		verdict := "met"
		switch {
		case over > pageBytes:
			verdict = "NOT met"
		case over > 0:
			verdict = fmt.Sprintf("NOT met by %.0f B: the allocator rounds an array this large up to whole %d KiB pages", over, pageBytes>>10)
		}
		s += fmt.Sprintf("; %.3f× the card's %.0f B (target ≤%.0f×: %s)", x, card, r.maxAlloc, verdict)
	}
	return s
}

// pageBytes is the Go allocator's page: a large allocation is rounded up
// to whole pages.
const pageBytes = 8 << 10

func bytes(b float64) string {
	switch {
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.0f KiB", b/1024)
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}

func cmpCell(res results, r row, t float64) string {
	var parts []string
	if r.loop {
		parts = append(parts, loopTargets(res, r.name)...)
	}
	if r.growth != "" {
		parts = append(parts, growthCell(res, r, t))
	}
	if ms, ok := res.get(r.name, "cpu-ms/speech-s"); ok {
		verdict := "met"
		if ms > speechMaxMs {
			verdict = "NOT met"
		}
		s := fmt.Sprintf("CPU per second of speech: %.3g ms (goal ≤%d ms, 0.2%% of a core: %s)", ms, speechMaxMs, verdict)
		if f, ok := res.get(r.name, "floor-ms/s"); ok {
			s += fmt.Sprintf("; the same process idle, the device's 100 wakeups a second alone: %.3g ms per second (bench/README.md)", f)
		}
		parts = append(parts, s)
	}
	if p99, ok := res.get(r.name, "p99_us"); ok {
		if period, ok := res.get(r.name, "period_ms"); ok {
			limit := period*1000 + 2000
			verdict := "met"
			if p99 >= limit {
				verdict = "NOT met"
			}
			parts = append(parts, fmt.Sprintf("p99 %s (target < one period + 2 ms = %s: %s)", dur(p99*1e3), dur(limit*1e3), verdict))
		}
	}
	for _, c := range r.cmps {
		ref, ok := res.get(c.ref, "ns/op")
		if !ok {
			continue
		}
		ratio := ref / t
		cpuNote, cr := "", math.NaN()
		if rc, ok := res.get(c.ref, "cpu-ns/op"); ok {
			if oc, ok := res.get(r.name, "cpu-ns/op"); ok && oc > 0 {
				if cr = rc / oc; cr >= 1 {
					cpuNote = fmt.Sprintf(" (CPU time: %s faster)", times(cr))
				} else {
					cpuNote = fmt.Sprintf(" (CPU time: %s slower)", times(1/cr))
				}
			}
		}
		var s string
		if ratio >= 1 {
			s = fmt.Sprintf("**%s faster** than %s", times(ratio), c.label)
		} else {
			s = fmt.Sprintf("%s slower than %s", times(1/ratio), c.label)
		}
		s += cpuNote
		if c.target > 0 || c.slower > 0 {
			floor, label := c.target, "≥"+times(c.target)
			if c.slower > 0 {
				floor, label = 1/c.slower, "≤"+times(c.slower)+" slower"
			}
			verdict := func(x float64) string {
				if x >= floor {
					return "met"
				}
				return "NOT met"
			}
			s += fmt.Sprintf(" (target %s: wall %s", label, verdict(ratio))
			if !math.IsNaN(cr) {
				s += ", CPU " + verdict(cr)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// loopTargets are the verdicts on the loopback targets a row reports.
func loopTargets(res results, name string) []string {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var parts []string
	if a, ok := res.get(name, "allocs/op"); ok {
		parts = append(parts, fmt.Sprintf("%.0f allocations per chunk (target ≤%d: %s)", a, loopMaxAllocs, verdict(a <= loopMaxAllocs)))
	}
	if p50, ok := res.get(name, "p50_us"); ok {
		parts = append(parts, fmt.Sprintf("p50 %s (target < %d µs: %s)", dur(p50*1e3), loopMaxP50us, verdict(p50 < loopMaxP50us)))
	}
	if m, ok := res.get(name, "msgs/s"); ok {
		parts = append(parts, fmt.Sprintf("%.0f chunks/s (target ≥%d: %s)", m, loopMinMsgs, verdict(m >= loopMinMsgs)))
	}
	return parts
}

func times(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

func qualityCells(res results, name string) string {
	a, ok := res.get(name, "alias_dB")
	if !ok {
		return "| | | |"
	}
	a10, _ := res.get(name, "alias10k_dB")
	p, _ := res.get(name, "pass_dB")
	th, _ := res.get(name, "thdn_dB")
	d, _ := res.get(name, "delay_ms")
	bl, _ := res.get(name, "backlog_ms")
	return fmt.Sprintf("%.1f (%.1f) | %.2g | %.1f | %.2f | %.1f", a, a10, p, th, d, bl)
}
