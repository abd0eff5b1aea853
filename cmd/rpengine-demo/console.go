package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// console serialises everything the demo prints. stdout carries only reply
// text; everything else goes to stderr. On a terminal it also keeps a
// status line (connection, queue depth, speaking) in front of the prompt,
// and erases it before anything else is printed.
//
// Text from the engine is never printed raw (issue #16: ESC sequences in
// a clientVersion retitled the window and cleared the screen). Everything
// Text and Printf print goes through peertext.Text, which keeps newlines
// and tabs and escapes every other control character, in a pipe as on a
// terminal; the callers also bound each engine value with peertext.Clip.
type console struct {
	out, err io.Writer
	tty      bool

	mu      sync.Mutex // guards following
	status  bool       // a status line is drawn (tty only)
	midLine bool       // stdout holds a partial reply line
	ed      *editor    // the line editor, once interactive on a terminal
	partial string     // with the editor: the reply's unfinished line, not yet printed
}

// useEditor sends everything printed on the terminal through ed, which
// keeps the prompt and the line being typed below it; the status line
// becomes ed's prompt.
func (c *console) useEditor(ed *editor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.ed = ed
	c.out = ed
	if isTerminal(c.err) {
		c.err = ed
	}
}

func newConsole(stdout, stderr io.Writer) *console {
	return &console{out: stdout, err: stderr, tty: isTerminal(stdout)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// clearLocked erases the status line. c.mu must be held.
func (c *console) clearLocked() {
	if !c.status {
		return
	}
	c.status = false
	if c.ed != nil {
		c.ed.Prompt("", "")
		return
	}
	fmt.Fprint(c.out, "\r\x1b[2K")
}

// endLineLocked ends a partial reply line. c.mu must be held.
func (c *console) endLineLocked() {
	if c.midLine {
		io.WriteString(c.out, c.partial+"\n")
		c.partial = ""
		c.midLine = false
	}
}

// Printf writes a line of progress to stderr. With the line editor the
// prompt stays, below the line.
func (c *console) Printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ed == nil {
		c.clearLocked()
	}
	if c.tty {
		c.endLineLocked()
	}
	msg := peertext.Text(fmt.Sprintf(format, args...))
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	io.WriteString(c.err, msg)
}

// Text streams a piece of reply text to stdout, escaped by peertext.Text
// (the reply is data: docs/demo.md, "Scripted contract"). With the line
// editor it prints whole lines only, above the line being typed.
func (c *console) Text(s string) {
	if s == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	s = peertext.Text(s)
	if c.ed != nil {
		// The editor draws the prompt and the line being typed right
		// after what it prints, as if that ended a line: a partial reply
		// line would take the player's typing, and a typed Enter would cut
		// the reply in two (a line typed while the reply streams). So the
		// unfinished line waits until it ends.
		s = c.partial + s
		i := strings.LastIndexByte(s, '\n') + 1
		c.partial = s[i:]
		c.midLine = c.partial != ""
		if i > 0 {
			io.WriteString(c.out, s[:i])
		}
		return
	}
	io.WriteString(c.out, s)
	c.midLine = !strings.HasSuffix(s, "\n")
}

// EndText ends the reply's line on stdout.
func (c *console) EndText() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.endLineLocked()
}

// Status draws the status line and prompt, on a terminal only.
func (c *console) Status(s string) { c.draw("["+s+"]", " you> ") }

// Meter draws a level meter in place of the status line, on a terminal
// only; the next output erases it.
func (c *console) Meter(s string) { c.draw("", s) }

// draw puts dim (drawn dim) and plain on stdout's last line, to be erased
// by the next output. With the line editor they are the editor's prompt.
func (c *console) draw(dim, plain string) {
	if !c.tty {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLineLocked()
	if c.ed != nil {
		c.ed.Prompt(dim, plain)
		c.status = true
		return
	}
	c.clearLocked()
	if dim != "" {
		io.WriteString(c.out, "\x1b[2m"+dim+"\x1b[0m")
	}
	io.WriteString(c.out, plain)
	c.status = true
}

// logWriter is the console as an io.Writer for slog.
type logWriter struct{ c *console }

func (w logWriter) Write(p []byte) (int, error) {
	w.c.Printf("%s", p)
	return len(p), nil
}

// oneLine formats err on one line (network errors can hold newlines),
// bounded: an error can quote the engine.
func oneLine(err error) string {
	return peertext.Clip(strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", ": "), peertext.LineBytes)
}

// meter renders a level 0..1 as a bar.
func meter(level float64) string {
	const width = 20
	n := int(level*width + 0.5)
	n = max(0, min(width, n))
	return strings.Repeat("#", n) + strings.Repeat(".", width-n)
}
