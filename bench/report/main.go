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
}

type row struct {
	name, what, variant string
	cmps                []cmp
}

func rows() []row {
	var rs []row
	for _, c := range []string{"small", "typical", "large"} {
		p := "Hash/" + c + "/"
		what := "card hash, " + c
		rs = append(rs,
			row{p + "cold", what, "**ours, cold** (card.Parse, new bytes)", []cmp{{p + "jcs", "jcs+sha256", 4}, {p + "node", "Node canonicalize", 0}, {p + "sha256", "sha256 alone (floor)", 0}}},
			row{p + "memo-hash", what, "**ours, memoized** (Card.Hash)", []cmp{{p + "cold", "cold", 1000}}},
			row{p + "memo-parse", what, "ours, Parse of bytes seen before", []cmp{{p + "cold", "cold", 0}}},
			row{p + "jcs", what, "ref: jcs.Transform + sha256", nil},
			row{p + "node", what, "ref: Node.js canonicalize + crypto", nil},
			row{p + "sha256", what, "floor: sha256 of canonical bytes", nil},
		)
	}
	rs = append(rs,
		row{"Plan/typical/one-field-edit", "transfer planning", "**ours**: Plan, one-field edit (diff + verify)", []cmp{{"Hash/typical/cold", "a cold hash", 0}}},
		row{"Plan/typical/unchanged", "transfer planning", "ours: Plan, unchanged card (reference)", nil},
		row{"ReplyPCM/decoder", "reply PCM path, per 32 KiB chunk", "**ours**: stream.ChunkDecoder + Assembler", []cmp{{"ReplyPCM/naive", "naive", 6}, {"ReplyPCM/json+assembler", "encoding/json + Assembler", 0}, {"ReplyPCM/base64", "base64 alone (floor)", 0}}},
		row{"ReplyPCM/json+assembler", "reply PCM path, per 32 KiB chunk", "encoding/json (envelope, payload) + Assembler", nil},
		row{"ReplyPCM/naive", "reply PCM path, per 32 KiB chunk", "ref: encoding/json struct + base64.Decode", nil},
		row{"ReplyPCM/base64", "reply PCM path, per 32 KiB chunk", "floor: base64 decode of the data", nil},
		row{"Capture", "capture, 5 s push to talk", "**ours**: 48 kHz stereo f32 → base64 16 kHz s16le", nil},
	)
	for _, rate := range []struct{ name, what string }{{"48k-16k", "resampler 48 → 16 kHz"}, {"44k1-16k", "resampler 44.1 → 16 kHz"}} {
		p := "Resampler/" + rate.name + "/"
		rs = append(rs,
			row{p + "ours", rate.what, "**ours**: audio.Resampler", []cmp{{p + "speexdsp-q5", "speexdsp q5", 1}, {p + "speexdsp-q3", "speexdsp q3", 0}, {p + "soxr-hq", "soxr HQ", 0}, {p + "lsr-best", "libsamplerate best", 0}}},
			row{p + "speexdsp-q3", rate.what, "ref: speexdsp q3", nil},
			row{p + "speexdsp-q5", rate.what, "ref: speexdsp q5", nil},
			row{p + "soxr-hq", rate.what, "ref: soxr HQ", nil},
			row{p + "lsr-best", rate.what, "ref: libsamplerate sinc best", nil},
		)
	}
	rs = append(rs,
		row{"Loopback/latency", "end to end, loopback WebSocket", "**ours**: chunk sent → samples queued", nil},
		row{"Loopback/throughput", "end to end, loopback WebSocket", "**ours**: chunks back to back", nil},
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
	for _, r := range rows() {
		t, ok := res.get(r.name, "ns/op")
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.what, r.variant, timeCell(res, r.name, t),
			speedCell(res, r.name), allocCell(res, r.name), cmpCell(res, r, t), qualityCells(res, r.name))
	}
	return nil
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
		s, _ := res.get(name, "snapshot_B")
		parts = append(parts, fmt.Sprintf("patch %.0f B vs snapshot %.0f B", v, s))
	}
	return strings.Join(parts, "; ")
}

func allocCell(res results, name string) string {
	a, ok := res.get(name, "allocs/op")
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%.0f", a)
	if c, ok := res.get(name, "allocs/chunk"); ok {
		s = fmt.Sprintf("%.2f per chunk", c)
	}
	if b, ok := res.get(name, "B/op"); ok {
		s += fmt.Sprintf(" (%s)", bytes(b))
	}
	return s
}

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
		if c.target > 0 {
			verdict := func(x float64) string {
				if x >= c.target {
					return "met"
				}
				return "NOT met"
			}
			s += fmt.Sprintf(" (target ≥%s: wall %s", times(c.target), verdict(ratio))
			if !math.IsNaN(cr) {
				s += ", CPU " + verdict(cr)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
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
