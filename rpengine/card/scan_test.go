package card

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The kernel sets each build has are listed by scanKernels and scanImpls
// (scan_amd64_test.go, scan_other_test.go).

// scanKernel is a set of kernels the benchmarks can select: use selects
// it and returns what restores the one before.
type scanKernel struct {
	name string
	use  func() (restore func())
}

// scanImpl is one set of kernels, called directly, whatever the CPU
// selects: the tests check each against the Go ones.
type scanImpl struct {
	name      string
	quoteEnd  func(p []byte) (int, bool)
	validUTF8 func(p []byte) bool
	gather    func(out, src []byte, ops []gatherOp)
}

// TestValidUTF8 checks the document-wide UTF-8 check (each kernel)
// against unicode/utf8 on every sequence of up to three bytes from an
// alphabet of boundary values, at every offset of a 32-byte block, and on
// random text with damage. Issue #24.
func TestValidUTF8(t *testing.T) {
	t.Parallel()
	for _, k := range scanImpls() {
		t.Run(k.name, func(t *testing.T) { testValidUTF8(t, k.validUTF8) })
	}
}

func testValidUTF8(t *testing.T, validUTF8 func([]byte) bool) {
	alphabet := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff}
	var seqs [][]byte
	for _, a := range alphabet {
		seqs = append(seqs, []byte{a})
		for _, b := range alphabet {
			seqs = append(seqs, []byte{a, b})
			for _, c := range alphabet {
				seqs = append(seqs, []byte{a, b, c})
			}
		}
	}
	// Every valid four-byte lead and boundary continuations.
	for _, a := range []byte{0xf0, 0xf1, 0xf4, 0xf5} {
		for _, b := range []byte{0x80, 0x8f, 0x90, 0xbf, 0xc0} {
			seqs = append(seqs, []byte{a, b, 0x80, 0x80}, []byte{a, b, 0x80}, []byte{a, b, 0x80, 0x41})
		}
	}
	buf := make([]byte, 0, 80)
	for _, s := range seqs {
		// Up to 64, the blocks go one at a time; past 128, four at a time.
		for _, at := range []int{0, 1, 13, 28, 29, 30, 31, 32, 60, 61, 62, 63, 64, 95, 96, 126, 127, 159, 160} {
			buf = append(buf[:0], bytes.Repeat([]byte{'a'}, at)...)
			buf = append(buf, s...)
			for _, tail := range []int{0, 1, 40, 130} {
				doc := append(buf, bytes.Repeat([]byte{'b'}, tail)...)
				if got, want := validUTF8(doc), utf8.Valid(doc); got != want {
					t.Fatalf("% x at %d, %d after: validUTF8 %v, utf8.Valid %v", s, at, tail, got, want)
				}
				// The same after a multibyte character, so that blocks
				// before it take the vector path.
				doc = append([]byte("é"+string(doc[:0])), doc...)
				if got, want := validUTF8(doc), utf8.Valid(doc); got != want {
					t.Fatalf("é then % x at %d, %d after: validUTF8 %v, utf8.Valid %v", s, at, tail, got, want)
				}
			}
		}
	}
	// A document of 64 KiB or more goes four blocks a step: the same
	// sequences at offsets around the ends of a step and of its blocks.
	big := bytes.Repeat([]byte{'a'}, 65<<10)
	for _, s := range seqs {
		ats := []int{30, 31, 32, 63, 95, 96, 126, 127, 128}
		if len(s) == 3 {
			ats = []int{31, 126, 127} // the rest are checked above, a block at a time
		}
		for _, at := range ats {
			for _, pre := range []string{"", "é"} {
				n := copy(big[at-len(pre):], pre)
				copy(big[at:], s)
				if got, want := validUTF8(big), utf8.Valid(big); got != want {
					t.Fatalf("%q then % x at %d of %d: validUTF8 %v, utf8.Valid %v", pre, s, at, len(big), got, want)
				}
				copy(big[at-n:], bytes.Repeat([]byte{'a'}, n+len(s)))
			}
		}
	}
	seed := uint64(24)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	text := []rune("aé東😀—\u00a0\uffff\U0010ffff")
	for range 2000 {
		var b []byte
		for range rng.IntN(200) {
			b = utf8.AppendRune(b, text[rng.IntN(len(text))])
		}
		if len(b) > 0 && rng.IntN(2) == 0 {
			b[rng.IntN(len(b))] = byte(rng.IntN(256)) // damage
		}
		if len(b) > 0 && rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b))] // a cut sequence
		}
		if got, want := validUTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("% x: validUTF8 %v, utf8.Valid %v", b, got, want)
		}
	}
}

// TestIndexSpecial checks the vector scan against the word-at-a-time one
// (and both against a byte loop): a special byte at every offset of
// every length up to 100, after ASCII and after non-ASCII bytes.
func TestIndexSpecial(t *testing.T) {
	t.Parallel()
	slow := func(p []byte) int {
		for i, b := range p {
			if b == '"' || b == '\\' || b < 0x20 {
				return i
			}
		}
		return len(p)
	}
	for _, fill := range []byte{'a', 0xe9, 0x7f, 0x20, 0xff} {
		for n := range 100 {
			p := bytes.Repeat([]byte{fill}, n)
			if got, want := indexSpecial(p), slow(p); got != want {
				t.Fatalf("fill %#x, length %d, none: %d, want %d", fill, n, got, want)
			}
			for at := range n {
				for _, s := range []byte{'"', '\\', 0x00, 0x1f, '\n'} {
					p[at] = s
					want := slow(p)
					if got := indexSpecial(p); got != want {
						t.Fatalf("fill %#x, length %d, %#x at %d: %d, want %d", fill, n, s, at, got, want)
					}
					if got := indexSpecialGeneric(p); got != want {
						t.Fatalf("generic: fill %#x, length %d, %#x at %d: %d, want %d", fill, n, s, at, got, want)
					}
					p[at] = fill
				}
			}
		}
	}
}

// TestQuoteEnd checks the scan for the end of a string body (AVX2 on
// amd64) against the word-at-a-time one and a byte loop: every escape,
// valid or not, and every stop byte at every offset, after runs of short
// escapes that move the vector scan off its block boundaries.
func TestQuoteEnd(t *testing.T) {
	t.Parallel()
	for _, k := range scanImpls() {
		t.Run(k.name, func(t *testing.T) { testQuoteEnd(t, k.quoteEnd) })
	}
}

func testQuoteEnd(t *testing.T, quoteEnd func([]byte) (int, bool)) {
	slow := func(p []byte) (int, bool) {
		esc := false
		for i := 0; i < len(p); i++ {
			switch b := p[i]; {
			case b == '"' || b < 0x20:
				return i, esc
			case b == '\\':
				if i+1 >= len(p) || !shortEscape[p[i+1]] {
					return i, esc
				}
				esc = true
				i++
			}
		}
		return len(p), esc
	}
	// Runs of backslashes of every length at every offset: the vector
	// scan follows them through the carry of an addition, across blocks.
	for at := range 70 {
		for run := range 70 {
			for _, after := range []string{`"`, "n", "u", "/", "x", "\x01", "", `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`} {
				b := []byte(strings.Repeat("x", at) + strings.Repeat(`\`, run) + after)
				wn, we := slow(b)
				if n, e := quoteEnd(b); n != wn || e != we {
					t.Fatalf("%q: quoteEnd %d %v, want %d %v", b, n, e, wn, we)
				}
			}
		}
	}
	// Every byte after a backslash, at every offset of a 64-byte step:
	// the vector scan classifies the second bytes of escapes by nibbles.
	for at := range 130 {
		for c := range 256 {
			b := []byte(strings.Repeat("x", at) + `\` + string(rune(c))[:1] + strings.Repeat("y", 70) + `"`)
			b[at+1] = byte(c)
			wn, we := slow(b)
			if n, e := quoteEnd(b); n != wn || e != we {
				t.Fatalf("%q: quoteEnd %d %v, want %d %v", b, n, e, wn, we)
			}
		}
	}
	seed := uint64(2424)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	pieces := []string{"a", "é", "東京", `\"`, `\\`, `\n`, `\t`, `\b`, `\f`, `\r`, `\/`, `\u00e9`, `\x`, "\x01", `"`, "\\"}
	for range 20000 {
		var b []byte
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				b = append(b, pieces[rng.IntN(len(pieces))]...)
			} else {
				b = append(b, bytes.Repeat([]byte{'x'}, rng.IntN(40))...)
			}
		}
		wn, we := slow(b)
		if n, e := quoteEnd(b); n != wn || e != we {
			t.Fatalf("%q: quoteEnd %d %v, want %d %v", b, n, e, wn, we)
		}
		if n, e := quoteEndGeneric(b, 0, false); n != wn || e != we {
			t.Fatalf("%q: quoteEndGeneric %d %v, want %d %v", b, n, e, wn, we)
		}
	}
}

// TestGather checks the copies of the second pass (AVX2 on amd64)
// against copy: random pieces of random lengths, with and without
// commas, copied in a random order, up to the very end of the output and
// of the source (where the vector copy must not over-read or over-write).
func TestGather(t *testing.T) {
	t.Parallel()
	for _, k := range scanImpls() {
		t.Run(k.name, func(t *testing.T) { testGather(t, k.gather) })
	}
}

func testGather(t *testing.T, gather func(out, src []byte, ops []gatherOp)) {
	seed := uint64(4224)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 9))
	for range 3000 {
		src := make([]byte, rng.IntN(400))
		for i := range src {
			src[i] = byte('a' + rng.IntN(26))
		}
		// Cut src into pieces; a piece after a ',' of src may take it as
		// its comma.
		var ops []gatherOp
		for s := 0; s < len(src); {
			e := min(len(src), s+rng.IntN(80))
			op := gatherOp{uint32(s), uint32(e)}
			if s > 0 && rng.IntN(3) == 0 {
				src[s-1] = ','
				op.s |= opComma
				// the comma is the byte before the piece: out has room for it
			}
			ops = append(ops, op)
			s = e
			if s < len(src) && rng.IntN(3) == 0 {
				s++ // a byte no op takes
			}
		}
		rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
		n := 0
		for _, op := range ops {
			n += int(op.e) - int(op.s&^opComma)
			if op.s&opComma != 0 {
				n++
			}
		}
		want := make([]byte, n)
		gatherGeneric(want, src, ops)
		got := make([]byte, n)
		gather(got, src, ops)
		if !bytes.Equal(got, want) {
			t.Fatalf("src %q ops %v:\n got %q\nwant %q", src, ops, got, want)
		}
	}
}

// TestShortInt checks the word-at-a-time digit scan of shortInt against
// its definition on every byte after up to 16 digits, with and without a
// sign and a leading zero.
func TestShortInt(t *testing.T) {
	t.Parallel()
	slow := func(src []byte, i int) int {
		d := i
		if src[d] == '-' {
			d++
		}
		j := d
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		n := j - d
		if n == 0 || n > 15 || (src[d] == '0' && (n > 1 || d > i)) || (j < len(src) && (src[j] == '.' || src[j] == 'e' || src[j] == 'E')) {
			return 0
		}
		return j
	}
	for _, sign := range []string{"", "-"} {
		for _, lead := range []string{"1", "0", "9"} {
			for n := range 17 {
				digits := lead + strings.Repeat("7", n)
				for b := range 256 {
					for _, pad := range []string{"", "xxxxxxxxxxxxxxxx"} {
						src := []byte(" " + sign + digits + string(rune(b))[:1] + pad)
						src[len(sign)+len(digits)+1] = byte(b)
						if got, want := shortInt(src, 1), slow(src, 1); got != want {
							t.Fatalf("%q: shortInt %d, want %d", src, got, want)
						}
					}
				}
			}
		}
	}
}

// scanBenchText returns n bytes of card-like prose: words, a short escape
// (\" \\ \n) every 70 bytes or so and a non-ASCII character every 140 or
// so, with no '"' unescaped.
func scanBenchText(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 3))
	pieces := []string{`\"`, `\\`, `\n`}
	words := []string{"the", "tavern", "keeper", "smiles", "and", "pours", "a", "drink", "for", "you"}
	var b []byte
	for len(b) < n {
		switch r := rng.IntN(100); {
		case r < 8:
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		case r < 12:
			b = append(b, "é"...)
		default:
			b = append(b, words[rng.IntN(len(words))]...)
			b = append(b, ' ')
		}
	}
	return b[:n:n]
}

// BenchmarkScanKernels measures the byte-scanning kernels on card-like
// text, each with the kernel the CPU selects and with the ones it could
// fall back to: quoteEnd on string bodies of 40, 300 and 3,000 bytes,
// validUTF8 on 2 KB, 10 KB and 1 MB documents, gather on the copies of
// lorebook-sized members.
func BenchmarkScanKernels(b *testing.B) {
	body40 := append(scanBenchText(40, 1), `"`...)
	for _, k := range scanKernels() {
		for _, n := range []int{40, 300, 3000} {
			body := append(scanBenchText(n, 1), `"`...)
			b.Run(k.name+"/quoteEnd/"+itoa(n), func(b *testing.B) {
				defer k.use()()
				b.SetBytes(int64(n))
				for b.Loop() {
					if i, _ := quoteEnd(body); i != n {
						b.Fatalf("quoteEnd %d, want %d", i, n)
					}
				}
			})
		}
		// A string of 40 bytes: past scanValidString's preamble, one step.
		str := append([]byte(`"`), body40...)
		b.Run(k.name+"/scanValidString/40", func(b *testing.B) {
			defer k.use()()
			b.SetBytes(int64(len(str)))
			for b.Loop() {
				if end, _, ok := scanValidString(str, 0); !ok || end != len(str) {
					b.Fatalf("scanValidString %d %v, want %d", end, ok, len(str))
				}
			}
		})
		for _, n := range []int{2 << 10, 10 << 10, 1 << 20} {
			doc := scanBenchText(n, 2)
			b.Run(k.name+"/validUTF8/"+itoa(n), func(b *testing.B) {
				defer k.use()()
				b.SetBytes(int64(n))
				for b.Loop() {
					if !validUTF8(doc) {
						b.Fatal("invalid")
					}
				}
			})
		}
		src := scanBenchText(10<<10, 3)
		rng := rand.New(rand.NewPCG(4, 4))
		var ops []gatherOp
		for s := 0; s < len(src); {
			e := min(len(src), s+5+rng.IntN(120))
			op := gatherOp{uint32(s), uint32(e)}
			if s > 0 && rng.IntN(2) == 0 {
				op.s |= opComma
			}
			ops = append(ops, op)
			s = e + 1
		}
		n := 0
		for _, op := range ops {
			n += int(op.e) - int(op.s&^opComma) + int(op.s>>31)
		}
		out := make([]byte, n)
		b.Run(k.name+"/gather/10240", func(b *testing.B) {
			defer k.use()()
			b.SetBytes(int64(n))
			for b.Loop() {
				gather(out, src, ops)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestScanKernelsAgree checks each kernel the CPU can run (AVX-512, AVX2)
// against the Go ones on card-like text of every length up to 300: a
// short escape, a wrong escape or a stop byte at every offset around
// the edges of 32- and 64-byte blocks and at the end; a bad UTF-8 byte
// at every position; and copies of random pieces. Issue #24.
func TestScanKernelsAgree(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	goQuoteEnd := func(p []byte) (int, bool) { return quoteEndGeneric(p, 0, false) }
	inserts := []string{`\"`, `\\`, `\n`, `\t`, `\u`, `\/`, `\x`, `\`, `\\\`, `"`, "\x00", "\x1f", "é", "\xe6\x9d\xb1"}
	bad := []byte{0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff}
	for n := 0; n <= 300; n++ {
		text := scanBenchText(n, uint64(n))
		var ats []int
		for e := 0; e <= n+1; e += 32 {
			for d := -3; d <= 2; d++ {
				if at := e + d; at >= 0 && at <= n {
					ats = append(ats, at)
				}
			}
		}
		ats = append(ats, max(n-1, 0), n, rng.IntN(n+1))
		b := make([]byte, n)
		for _, k := range scanImpls() {
			for _, at := range ats {
				for _, ins := range inserts {
					copy(b, text)
					copy(b[at:], ins) // cut at the end
					wn, we := goQuoteEnd(b)
					if gn, ge := k.quoteEnd(b); gn != wn || ge != we {
						t.Fatalf("%s: %q: quoteEnd %d %v, want %d %v", k.name, b, gn, ge, wn, we)
					}
					if got, want := k.validUTF8(b), utf8.Valid(b); got != want {
						t.Fatalf("%s: % x: validUTF8 %v, want %v", k.name, b, got, want)
					}
				}
			}
			copy(b, text)
			for i := range n {
				for _, c := range bad {
					b[i] = c
					if got, want := k.validUTF8(b), utf8.Valid(b); got != want {
						t.Fatalf("%s: %#x at %d of % x: validUTF8 %v, want %v", k.name, c, i, b, got, want)
					}
				}
				b[i] = text[i]
			}
			for range 20 {
				var ops []gatherOp
				for s := 0; s < n; {
					e := min(n, s+rng.IntN(140))
					op := gatherOp{uint32(s), uint32(e)}
					if rng.IntN(3) == 0 {
						op.s |= opComma
					}
					ops = append(ops, op)
					s = e + rng.IntN(2)
				}
				rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
				size := 0
				for _, op := range ops {
					size += int(op.e) - int(op.s&^opComma) + int(op.s>>31)
				}
				want := make([]byte, size)
				gatherGeneric(want, text, ops)
				got := make([]byte, size)
				k.gather(got, text, ops)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: src %q ops %v:\n got %q\nwant %q", k.name, text, ops, got, want)
				}
			}
		}
	}
}
