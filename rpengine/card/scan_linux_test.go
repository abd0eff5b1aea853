//go:build linux

package card

import (
	"bytes"
	"syscall"
	"testing"
	"unicode/utf8"
)

// TestScanKernelsPageEnd runs each kernel on text that ends where an
// unreadable page begins: the vector kernels must read nothing past the
// end of their input (a fault would crash the test), whatever they read
// under masks. Issue #24.
func TestScanKernelsPageEnd(t *testing.T) {
	t.Parallel()
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	for _, k := range scanImpls() {
		for n := 0; n <= 300; n++ {
			text := scanBenchText(n, uint64(n))
			b := mem[page-n : page : page]
			copy(b, text)
			wn, we := quoteEndGeneric(b, 0, false)
			if gn, ge := k.quoteEnd(b); gn != wn || ge != we {
				t.Fatalf("%s: %q: quoteEnd %d %v, want %d %v", k.name, b, gn, ge, wn, we)
			}
			if got, want := k.validUTF8(b), utf8.Valid(b); got != want {
				t.Fatalf("%s: % x: validUTF8 %v, want %v", k.name, b, got, want)
			}
			// A copy of the whole text into the start of the page, and
			// one of its start into the end of the page.
			want := append([]byte(nil), text...)
			dst := mem[:n]
			k.gather(dst, b, []gatherOp{{0, uint32(n)}})
			if !bytes.Equal(dst, want) {
				t.Fatalf("%s: gather from the page end: %q, want %q", k.name, dst, want)
			}
			src := append([]byte(nil), text...)
			k.gather(b, src, []gatherOp{{0, uint32(n)}})
			if !bytes.Equal(b, want) {
				t.Fatalf("%s: gather to the page end: %q, want %q", k.name, b, want)
			}
		}
	}
}
