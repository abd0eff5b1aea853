package main

import (
	"io"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// A line typed while a reply streams goes below the reply, never into
// it. The editor draws the line being typed right after what it prints,
// so a partial reply line took the typing and the typed Enter cut the
// reply in two (TestInteractive_LineEditing failed now and then: its
// first reply began while the lines typed ahead were still being read).
// The editor is the demo's, on a pipe instead of a terminal (newEditor
// needs a real one).
func TestConsole_TypingDuringReply(t *testing.T) {
	t.Parallel()
	keys, typing := io.Pipe()
	var screen testutil.SyncBuffer
	ed := newEditorOn(keys, &screen, func() int { return 80 }, func() error { return nil }, nil)
	con := newConsole(io.Discard, io.Discard)
	con.tty = true
	con.useEditor(ed)
	lines := make(chan string)
	go func() {
		defer close(lines)
		for {
			line, _, err := ed.ReadLine()
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	t.Cleanup(func() {
		typing.Close()
		for range lines { // the reading goroutine ends with the input
		}
	})
	con.Text("I hear you.")
	go typing.Write([]byte("typed\r"))
	testutil.Equal(t, "line typed", <-lines, "typed")
	con.Text(" You said: hi")
	con.EndText()
	s := screen.String()
	if !strings.Contains(s, "I hear you. You said: hi\n") || strings.Contains(s, "I hear you.typed") {
		t.Errorf("the typed line tore the reply apart on the terminal: %q", s)
	}
}
