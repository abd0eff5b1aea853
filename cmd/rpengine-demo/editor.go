package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/term"
)

// editor edits the line being typed when stdin and stdout are a terminal:
// arrows, Home/End, history (Up/Down, the last 100 lines), Ctrl-A/E/B/F,
// Ctrl-W/U/K, Alt-Left/Right, Delete, UTF-8 input and bracketed paste.
// Positions are display columns and the cursor moves by grapheme cluster,
// as rivo/uniseg counts them (East Asian wide characters and emoji take
// two columns, combining marks none), so what is shown is what is typed.
//
// The prompt and the line share one terminal row: the prompt is clipped
// and the line scrolls sideways rather than wrapping, so a narrow or
// resized terminal never shows a half-erased copy of either (Issue #32).
// When a line is entered, the row is kept without the prompt's dim part
// (the status) and the prompt is drawn again below.
//
// The terminal keeps generating signals for Ctrl-Z and Ctrl-\ and
// translating output newlines; canonical input, echo and Ctrl-C's SIGINT
// are turned off (Ctrl-C is a key here, see ReadLine), and restored on
// Close. Escape sequences of keys the editor does not know are dropped,
// never typed into the line.
//
// Everything the demo prints to the terminal goes through Write, which
// erases the prompt row, prints, and draws the row again below, so output
// never tears the player's typing apart.
type editor struct {
	in        io.Reader
	out       io.Writer
	size      func() int // the terminal's width in columns, 0 if unknown
	restore   func() error
	interrupt func(again bool) // see ReadLine

	// Used by ReadLine's goroutine only.
	raw     []byte // read, not yet decoded
	lineN   int    // bytes of the line being read, for limitLine
	paste   bool   // inside a bracketed paste
	ctrlC   bool   // the last key was Ctrl-C at an empty line
	readErr error  // how reading stdin ended
	dropped int64  // bytes dropped past maxLineBytes since the last ReadLine

	mu      sync.Mutex // guards following
	width   int
	dim     string   // the prompt's first part, drawn dim and clipped first
	plain   string   // its second part
	line    cells    // the line being typed
	cur     int      // the cursor, a cluster index into line
	off     int      // the first cell shown
	col     int      // the column the cursor was last drawn at
	history []string // oldest first, at most maxHistory
	hist    int      // the history entry shown; len(history) is the line typed
	saved   cells    // the line typed while a history entry is shown
	closed  bool
}

// maxHistory is how many entered lines Up and Down recall.
const maxHistory = 100

// newEditor puts the terminal on stdin into cbreak mode and returns an
// editor on it, or nil when stdin and stdout are not both terminals or
// the platform has no such mode here (Windows' console edits lines
// itself): lines are then read as they are, exactly as from a pipe.
// interrupt is called for Ctrl-C at an empty line (see ReadLine).
func newEditor(stdin io.Reader, stdout io.Writer, interrupt func(again bool)) *editor {
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil
	}
	restore, err := cbreak(int(in.Fd()))
	if err != nil {
		return nil
	}
	size := func() int {
		w, _, err := term.GetSize(int(out.Fd()))
		if err != nil {
			return 0
		}
		return w
	}
	e := newEditorOn(in, out, size, restore, interrupt)
	watchResize(e)
	return e
}

// newEditorOn returns an editor reading keys from in and drawing on out,
// a terminal size columns wide; restore is called by Close.
func newEditorOn(in io.Reader, out io.Writer, size func() int, restore func() error, interrupt func(bool)) *editor {
	e := &editor{in: in, out: out, size: size, restore: restore, interrupt: interrupt, width: size()}
	io.WriteString(out, "\x1b[?2004h") // bracketed paste on
	return e
}

// ReadLine returns the next line entered; io.EOF at Ctrl-D on an empty
// line or when stdin ends. A pasted line is a line like any other.
// dropped is the number of bytes dropped past maxLineBytes since the last
// call. Ctrl-C clears the line being typed; at an empty line it calls
// the interrupt function, with again true when the key before was that
// same Ctrl-C (a second press in a row).
func (e *editor) ReadLine() (line string, dropped int64, err error) {
	defer func() { dropped, e.dropped = e.dropped, 0 }()
	buf := make([]byte, 4096)
	var typed []byte // characters typed in a row, inserted at once
	for {
		for len(e.raw) > 0 {
			k, r, n := parseKey(e.raw, e.paste, e.readErr != nil)
			if n == 0 {
				break // the rest of a key is still to come
			}
			e.raw = e.raw[n:]
			if k == keyRune {
				typed = utf8.AppendRune(typed, r)
				e.ctrlC = false
				continue
			}
			typed = e.insert(typed)
			if line, done, err := e.handle(k); done {
				return line, 0, err
			}
		}
		typed = e.insert(typed)
		e.redraw()
		if e.readErr != nil {
			return "", 0, e.readErr
		}
		n, err := e.in.Read(buf)
		kept, d := limitLine(buf[:n], &e.lineN)
		e.dropped += int64(d)
		e.raw = append(e.raw, kept...)
		e.readErr = err
	}
}

// handle applies one key other than a character; done reports that
// ReadLine returns line and err.
func (e *editor) handle(k editKey) (line string, done bool, err error) {
	again := e.ctrlC
	e.ctrlC = false
	switch k {
	case keyPasteStart, keyPasteEnd:
		e.paste = k == keyPasteStart
	case keyEnter:
		return e.enter(), true, nil
	case keyInterrupt:
		if e.clear() {
			return "", false, nil
		}
		e.ctrlC = true
		if e.interrupt != nil {
			e.interrupt(again)
		}
	case keyEOF:
		if e.empty() {
			return "", true, io.EOF
		}
		e.edit(keyDelete)
	default:
		e.edit(k)
	}
	return "", false, nil
}

// editKey is what a sequence of input bytes means.
type editKey int

const (
	keyNone       editKey = iota // an unknown sequence or a control character: dropped
	keyRune                      // a character, typed into the line
	keyEnter                     // Enter (CR or LF)
	keyBackspace                 // Backspace, Ctrl-H
	keyDelete                    // Delete
	keyLeft                      // Left, Ctrl-B
	keyRight                     // Right, Ctrl-F
	keyWordLeft                  // Alt-Left, Ctrl-Left, Alt-B
	keyWordRight                 // Alt-Right, Ctrl-Right, Alt-F
	keyHome                      // Home, Ctrl-A
	keyEnd                       // End, Ctrl-E
	keyUp                        // Up, Ctrl-P: the previous line entered
	keyDown                      // Down, Ctrl-N
	keyKillWord                  // Ctrl-W, Alt-Backspace: the word before the cursor
	keyKillStart                 // Ctrl-U: from the start of the line to the cursor
	keyKillEnd                   // Ctrl-K: from the cursor to the end of the line
	keyInterrupt                 // Ctrl-C
	keyEOF                       // Ctrl-D
	keyPasteStart                // bracketed paste begins
	keyPasteEnd                  // and ends
)

// controls are the keys of the C0 control characters; any other is
// dropped. A tab is typed as a space.
var controls = map[byte]editKey{
	0x01: keyHome, 0x02: keyLeft, 0x03: keyInterrupt, 0x04: keyEOF, 0x05: keyEnd, 0x06: keyRight,
	0x08: keyBackspace, 0x7f: keyBackspace, 0x0a: keyEnter, 0x0d: keyEnter, 0x0b: keyKillEnd,
	0x0e: keyDown, 0x10: keyUp, 0x15: keyKillStart, 0x17: keyKillWord,
}

// sequences are the escape sequences of the keys the editor knows: CSI
// and SS3 (arrows and Home/End in application mode) forms, and the vt
// and rxvt forms of Home and End.
var sequences = map[string]editKey{
	"\x1b[A": keyUp, "\x1b[B": keyDown, "\x1b[C": keyRight, "\x1b[D": keyLeft, "\x1b[H": keyHome, "\x1b[F": keyEnd,
	"\x1bOA": keyUp, "\x1bOB": keyDown, "\x1bOC": keyRight, "\x1bOD": keyLeft, "\x1bOH": keyHome, "\x1bOF": keyEnd,
	"\x1b[1~": keyHome, "\x1b[7~": keyHome, "\x1b[4~": keyEnd, "\x1b[8~": keyEnd, "\x1b[3~": keyDelete,
	"\x1b[1;3D": keyWordLeft, "\x1b[1;5D": keyWordLeft, "\x1bb": keyWordLeft,
	"\x1b[1;3C": keyWordRight, "\x1b[1;5C": keyWordRight, "\x1bf": keyWordRight,
	"\x1b\x7f": keyKillWord, "\x1b[200~": keyPasteStart, "\x1b[201~": keyPasteEnd,
}

// parseKey returns the key at the start of b and its length in bytes, or
// n 0 when b ends inside it (unless final: stdin has ended, and the rest
// is dropped). In a paste every character is typed as it is and a line
// end enters the line; only the paste's end is a key.
func parseKey(b []byte, paste, final bool) (k editKey, r rune, n int) {
	switch c := b[0]; {
	case c == 0x1b:
		n := seqLen(b)
		if n == 0 {
			if final {
				return keyNone, 0, len(b)
			}
			return keyNone, 0, 0
		}
		if k := sequences[string(b[:n])]; !paste || k == keyPasteEnd {
			return k, 0, n
		}
		return keyNone, 0, n
	case c == '\t':
		return keyRune, ' ', 1
	case c < 0x20 || c == 0x7f:
		if k := controls[c]; !paste || k == keyEnter {
			return k, 0, 1
		}
		return keyNone, 0, 1
	case !utf8.FullRune(b) && !final:
		return keyNone, 0, 0
	}
	r, n = utf8.DecodeRune(b)
	if r == utf8.RuneError || (r >= 0x80 && r <= 0x9f) { // invalid, or a C1 control
		return keyNone, 0, n
	}
	return keyRune, r, n
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

// maxLineBytes bounds a line typed or pasted on the terminal, as the
// scanner bounds a piped one. Past it, characters are dropped up to the
// next Enter (key sequences still pass, so a paste always ends).
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

// empty reports whether no line is being typed.
func (e *editor) empty() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.line.len() == 0
}

// clear empties the line being typed and reports whether there was one.
func (e *editor) clear() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.line.len() == 0 {
		return false
	}
	e.line, e.cur, e.off, e.hist, e.saved = cells{}, 0, 0, len(e.history), cells{}
	return true
}

// enter ends the line: the row stays on the terminal, without the
// prompt's dim part, the line goes into the history, and an empty row
// with the prompt is drawn below.
func (e *editor) enter() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	line := string(e.line.text)
	if !e.closed {
		fmt.Fprintf(e.out, "\r\x1b[K%s%s\n", strings.TrimLeft(e.plain, " "), line)
	}
	if line != "" && (len(e.history) == 0 || e.history[len(e.history)-1] != line) {
		e.history = append(e.history, line)
		if len(e.history) > maxHistory {
			e.history = slices.Delete(e.history, 0, len(e.history)-maxHistory)
		}
	}
	e.line, e.cur, e.off, e.col, e.hist, e.saved = cells{}, 0, 0, 0, len(e.history), cells{}
	e.drawLocked()
	return line
}

// insert types s at the cursor and returns s[:0].
func (e *editor) insert(s []byte) []byte {
	if len(s) > 0 {
		e.mu.Lock()
		e.insertLocked(string(s))
		e.mu.Unlock()
	}
	return s[:0]
}

// edit applies an editing key to the line.
func (e *editor) edit(k editKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.line.len()
	switch k {
	case keyBackspace:
		if e.cur > 0 {
			e.line.delete(e.cur-1, e.cur)
			e.cur--
		}
	case keyDelete:
		if e.cur < n {
			e.line.delete(e.cur, e.cur+1)
		}
	case keyLeft:
		e.cur = max(0, e.cur-1)
	case keyRight:
		e.cur = min(n, e.cur+1)
	case keyHome:
		e.cur = 0
	case keyEnd:
		e.cur = n
	case keyWordLeft:
		e.cur = e.wordStartLocked()
	case keyWordRight:
		e.cur = e.wordEndLocked()
	case keyKillWord:
		start := e.wordStartLocked()
		e.line.delete(start, e.cur)
		e.cur = start
	case keyKillStart:
		e.line.delete(0, e.cur)
		e.cur = 0
	case keyKillEnd:
		e.line.delete(e.cur, n)
	case keyUp, keyDown:
		e.recallLocked(k == keyUp)
	}
}

// insertLocked types s at the cursor. e.mu must be held.
func (e *editor) insertLocked(s string) { e.cur = e.line.insert(e.cur, s) }

// wordStartLocked returns the start of the word before the cursor
// (spaces skipped first). e.mu must be held.
func (e *editor) wordStartLocked() int {
	i := e.cur
	for i > 0 && e.line.space(i-1) {
		i--
	}
	for i > 0 && !e.line.space(i-1) {
		i--
	}
	return i
}

// wordEndLocked returns the end of the word after the cursor. e.mu must
// be held.
func (e *editor) wordEndLocked() int {
	i := e.cur
	for i < e.line.len() && e.line.space(i) {
		i++
	}
	for i < e.line.len() && !e.line.space(i) {
		i++
	}
	return i
}

// recallLocked shows the previous (up) or next line entered; past the
// newest, the line that was being typed comes back. e.mu must be held.
func (e *editor) recallLocked(up bool) {
	switch {
	case up && e.hist > 0:
		if e.hist == len(e.history) {
			e.saved = e.line
		}
		e.hist--
	case !up && e.hist < len(e.history):
		e.hist++
	default:
		return
	}
	if e.hist == len(e.history) {
		e.line, e.saved = e.saved, cells{}
	} else {
		e.line = cells{}
		e.line.insert(0, e.history[e.hist])
	}
	e.cur = e.line.len()
}

// cells is a line as grapheme clusters. It holds no pointers, so that
// the garbage collector has nothing to follow in a line of a mebibyte.
type cells struct {
	text []byte
	ends []int32 // where each cluster ends in text
}

func (c *cells) len() int { return len(c.ends) }

// start returns where cluster i starts in text (len(text) for len()).
func (c *cells) start(i int) int {
	if i == 0 {
		return 0
	}
	return int(c.ends[i-1])
}

// at returns cluster i.
func (c *cells) at(i int) []byte { return c.text[c.start(i):c.ends[i]] }

// width returns cluster i's width in display columns.
func (c *cells) width(i int) int {
	_, _, w, _ := uniseg.FirstGraphemeCluster(c.at(i), -1)
	return w
}

// space reports whether cluster i is a space.
func (c *cells) space(i int) bool {
	return c.ends[i]-int32(c.start(i)) == 1 && c.text[c.start(i)] == ' '
}

// delete removes clusters i to j.
func (c *cells) delete(i, j int) {
	from, to := c.start(i), c.start(j)
	c.text = slices.Delete(c.text, from, to)
	c.ends = slices.Delete(c.ends, i, j)
	for k := i; k < len(c.ends); k++ {
		c.ends[k] -= int32(to - from)
	}
}

// insert puts s before cluster i and returns the index of the cluster
// after the last byte of s. The clusters on either side are segmented
// again with s, so that a combining mark or a joiner typed after a
// character joins its cluster.
func (c *cells) insert(i int, s string) int {
	from, to := max(0, i-1), min(c.len(), i+1)
	bFrom, bAt, bTo := c.start(from), c.start(i), c.start(to)
	joined := slices.Concat(c.text[bFrom:bAt], []byte(s), c.text[bAt:bTo])
	var ends []int32
	cursor, n := -1, 0
	for rest, state := joined, -1; len(rest) > 0; {
		var cl []byte
		cl, rest, _, state = uniseg.FirstGraphemeCluster(rest, state)
		n += len(cl)
		ends = append(ends, int32(bFrom+n))
		if cursor < 0 && n >= bAt-bFrom+len(s) {
			cursor = from + len(ends)
		}
	}
	if to == c.len() { // at the end, as typing mostly is: amortised appends
		c.text = append(c.text[:bFrom], joined...)
		c.ends = append(c.ends[:from], ends...)
		return cursor
	}
	c.text = slices.Replace(c.text, bFrom, bTo, joined...)
	c.ends = slices.Replace(c.ends, from, to, ends...)
	for k := from + len(ends); k < len(c.ends); k++ {
		c.ends[k] += int32(len(s))
	}
	return cursor
}

// Write prints p above the prompt row, which is drawn again below.
func (e *editor) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return e.out.Write(p)
	}
	io.WriteString(e.out, "\r\x1b[K")
	n, err := e.out.Write(p)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		io.WriteString(e.out, "\n")
	}
	e.drawLocked()
	return n, err
}

// Prompt shows dim (drawn dim, and clipped first when the row is short)
// and plain in front of the line being typed; both "" hide it.
func (e *editor) Prompt(dim, plain string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dim, e.plain = dim, plain
	e.drawLocked()
}

// redraw draws the prompt row.
func (e *editor) redraw() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drawLocked()
}

// resize takes the terminal's new width and draws the row again. A
// terminal that reflows its lines has wrapped a row that no longer fits,
// with the cursor on one of the rows below its first: the erasing starts
// there.
func (e *editor) resize() {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.size()
	if w <= 0 || w == e.width {
		return
	}
	if up := e.col / w; w < e.width && up > 0 && !e.closed {
		fmt.Fprintf(e.out, "\x1b[%dA", up)
	}
	if !e.closed {
		io.WriteString(e.out, "\r\x1b[J")
	}
	e.width = w
	e.drawLocked()
}

// minInputColumns is the room left for typing when the prompt is clipped.
const minInputColumns = 10

// drawLocked draws the prompt row: the prompt, clipped to leave room for
// typing, and the part of the line around the cursor, all in at most
// width-1 columns (a row filled to its last column would wrap). e.mu must
// be held.
func (e *editor) drawLocked() {
	if e.closed {
		return
	}
	avail := e.width - 1
	if e.width <= 0 {
		avail = 79
	}
	avail = max(avail, 2)
	budget := max(1, avail-min(minInputColumns, avail/2))
	plain := clipColumns(e.plain, budget)
	dim := clipColumns(e.dim, budget-uniseg.StringWidth(plain))
	room := avail - uniseg.StringWidth(plain) - uniseg.StringWidth(dim)

	// Scroll so that the cursor is on the row: at most room-1 columns of
	// the line before it.
	e.off = min(e.off, e.cur)
	w, first := 0, e.cur
	for first > e.off && w+e.line.width(first-1) <= room-1 {
		first--
		w += e.line.width(first)
	}
	e.off = first
	var b strings.Builder
	b.WriteString("\r")
	if dim != "" {
		b.WriteString("\x1b[2m" + dim + "\x1b[0m")
	}
	b.WriteString(plain)
	col, used := uniseg.StringWidth(dim)+uniseg.StringWidth(plain), 0
	for i := e.off; i < e.line.len(); i++ {
		cw := e.line.width(i)
		if used+cw > room {
			break
		}
		if i < e.cur {
			col += cw
		}
		used += cw
		b.Write(e.line.at(i))
	}
	b.WriteString("\x1b[K\r")
	if col > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", col)
	}
	e.col = col
	io.WriteString(e.out, b.String())
}

// clipColumns returns s cut to at most n display columns, ending in "…"
// when cut.
func clipColumns(s string, n int) string {
	if uniseg.StringWidth(s) <= n {
		return s
	}
	var b strings.Builder
	w, state := 0, -1
	for s != "" {
		var c string
		var cw int
		c, s, cw, state = uniseg.FirstGraphemeClusterInString(s, state)
		if w+cw > n-1 {
			break
		}
		b.WriteString(c)
		w += cw
	}
	if n > 0 {
		b.WriteString("…")
	}
	return b.String()
}

// Close hides the prompt row, turns bracketed paste off and restores the
// terminal's mode. It may be called more than once.
func (e *editor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	io.WriteString(e.out, "\r\x1b[K\x1b[?2004l")
	_ = e.restore()
}
