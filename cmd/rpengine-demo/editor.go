package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/term"
)

// editor edits the line being typed when stdin and stdout are a terminal:
// arrows, Home/End, history (Up/Down, the last 100 lines), Ctrl-A/E/B/F,
// Ctrl-W/U/K, Alt-Left/Right, UTF-8 input and bracketed paste, through
// golang.org/x/term's Terminal. The terminal keeps generating signals
// (Ctrl-C is SIGINT, as without the editor) and translating output
// newlines; only canonical input and echo are turned off, and both are
// restored on close. Escape sequences of keys the editor does not know
// are dropped by it, never typed into the line.
//
// Everything the demo prints to the terminal goes through Write, which
// erases the prompt and the line being typed, prints, and draws them
// again below, so output never tears the player's typing apart.
type editor struct {
	t       *term.Terminal
	in      *wakeReader
	out     *os.File
	restore func() error

	mu     sync.Mutex // guards following
	closed bool
}

// errWake ends a ReadLine early so that the next one draws a new prompt.
var errWake = errors.New("rpengine-demo: prompt changed")

// newEditor puts the terminal on stdin into cbreak mode and returns an
// editor on it, or nil when stdin and stdout are not both terminals or
// the platform has no such mode here (Windows' console edits lines
// itself): lines are then read as they are, exactly as from a pipe.
func newEditor(stdin io.Reader, stdout io.Writer) *editor {
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil
	}
	restore, err := cbreak(int(in.Fd()))
	if err != nil {
		return nil
	}
	wr := newWakeReader(in)
	e := &editor{in: wr, out: out, restore: restore}
	e.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{wr, out}, "")
	e.resize()
	e.t.SetBracketedPasteMode(true)
	watchResize(e)
	return e
}

// resize tells the editor the terminal's width, for wrapping long lines.
func (e *editor) resize() {
	if w, h, err := term.GetSize(int(e.out.Fd())); err == nil && w > 0 {
		_ = e.t.SetSize(w, h)
	}
}

// ReadLine returns the next line typed; io.EOF at Ctrl-D on an empty line
// or when stdin ends. A pasted line is a line like any other. dropped is
// the number of bytes dropped past maxLineBytes since the last call.
func (e *editor) ReadLine() (line string, dropped int64, err error) {
	defer func() { dropped = e.in.dropped.Swap(0) }()
	for {
		line, err := e.t.ReadLine()
		switch {
		case errors.Is(err, errWake):
			continue // draw the new prompt
		case errors.Is(err, term.ErrPasteIndicator):
			return line, 0, nil
		}
		return line, 0, err
	}
}

// Write prints p above the prompt and the line being typed.
func (e *editor) Write(p []byte) (int, error) { return e.t.Write(p) }

// Prompt shows prompt in front of the line being typed ("" hides it).
func (e *editor) Prompt(prompt string) {
	e.t.SetPrompt(prompt)
	_, _ = e.t.Write(nil) // redraws the prompt if a line is on screen
	e.in.Wake()           // else the next ReadLine draws it
}

// Close hides the prompt, turns bracketed paste off and restores the
// terminal's mode. It may be called more than once.
func (e *editor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	e.Prompt("")
	e.t.SetBracketedPasteMode(false)
	_ = e.restore()
}

// wakeReader reads stdin on a goroutine of its own so that a Read waiting
// for input can be ended by Wake (it then returns errWake, and no data is
// lost). The goroutine is blocked in the terminal's read when the demo
// exits; it holds nothing.
type wakeReader struct {
	chunks  chan []byte   // from the reading goroutine; closed at its end
	wake    chan struct{} // one pending wake-up at most
	buf     []byte        // unread rest of a chunk
	err     error         // how reading ended
	dropped atomic.Int64  // bytes dropped past maxLineBytes, not yet reported
}

// maxLineBytes bounds a line typed or pasted on the terminal, as the
// scanner bounds a piped one: the editor itself bounds typed lines but
// not pasted ones. Past it, characters are dropped up to the next Enter
// (key sequences still pass, so a paste always ends).
const maxLineBytes = 1 << 20

// limitLine drops the characters of b past maxLineBytes since the last
// line end; *n counts the current line's characters. It returns what is
// kept and how many bytes were dropped.
func limitLine(b []byte, n *int) (out []byte, dropped int) {
	out = b[:0:0]
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\r' || c == '\n':
			*n = 0
		case c == 0x1b:
			k := max(1, seqLen(b[i:]))
			out = append(out, b[i:i+k]...)
			i += k - 1
			continue
		case *n >= maxLineBytes:
			dropped++
			continue
		default:
			*n++
		}
		out = append(out, b[i])
	}
	return out, dropped
}

func newWakeReader(f io.Reader) *wakeReader {
	r := &wakeReader{chunks: make(chan []byte, 1), wake: make(chan struct{}, 1)}
	go func() {
		defer close(r.chunks)
		var pending []byte
		line := 0
		for {
			b := make([]byte, 4096)
			n, err := f.Read(b)
			var out []byte
			out, pending = rewriteKeys(append(pending, b[:n]...), err != nil)
			out, d := limitLine(out, &line)
			r.dropped.Add(int64(d))
			if len(out) > 0 {
				r.chunks <- out
			}
			if err != nil {
				r.err = err
				return
			}
		}
	}()
	return r
}

// rewriteKeys rewrites the key sequences terminals send that the editor
// does not know into ones it does, or drops them: SS3 keys (ESC O x: F1-F4,
// and arrows and Home/End in application mode), which the editor would
// type as a letter into the line, and Home/End as ESC [1~ ESC [4~ (also
// ESC [7~ ESC [8~), which it would ignore. Other sequences pass as they
// are. An incomplete sequence at the end is returned as rest, to be
// completed by the next read, unless final.
func rewriteKeys(b []byte, final bool) (out, rest []byte) {
	out = b[:0:0]
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		n := seqLen(b[i:])
		if n == 0 { // incomplete
			if !final {
				return out, b[i:]
			}
			return append(out, b[i:]...), nil
		}
		seq := string(b[i : i+n])
		switch {
		case strings.HasPrefix(seq, "\x1bO"):
			if x := seq[2]; strings.IndexByte("ABCDHF", x) >= 0 {
				out = append(out, 0x1b, '[', x)
			}
		case seq == "\x1b[1~" || seq == "\x1b[7~":
			out = append(out, "\x1b[H"...)
		case seq == "\x1b[4~" || seq == "\x1b[8~":
			out = append(out, "\x1b[F"...)
		default:
			out = append(out, seq...)
		}
		i += n - 1
	}
	return out, nil
}

// seqLen returns the length of the escape sequence at the start of b, or
// 0 if b ends before it does: ESC O x, ESC [ parameters final byte, or
// ESC and one byte.
func seqLen(b []byte) int {
	switch {
	case len(b) < 2:
		return 0
	case b[1] == 'O':
		if len(b) < 3 {
			return 0
		}
		return 3
	case b[1] == '[':
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1
			}
		}
		return 0
	}
	return 2
}

// Wake ends the Read in progress, or the next one, with errWake.
func (r *wakeReader) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Read is called by the Terminal, one call at a time.
func (r *wakeReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		select {
		case b, ok := <-r.chunks:
			if !ok {
				return 0, r.err // set before the channel closed
			}
			r.buf = b
		case <-r.wake:
			return 0, errWake
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}
