package main

import (
	"errors"
	"strings"
	"testing"

	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// Issue #16: text from the Harness reached the terminal raw. Streamed
// text, unprompted text and error messages are escaped, errors bounded.
func TestOutput_escapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	o := newOutput(&b, nil)
	o.event(xty.Event{Kind: xty.EventText, InteractionID: "i", Text: "Hi\x1b[2J"})
	o.event(xty.Event{Kind: xty.EventDone, InteractionID: "i", Text: "Hi\x1b[2J"})
	o.event(xty.Event{Kind: xty.EventDone, InteractionID: "j", Source: xty.SourceProactive, Text: "psst\x1b]0;t\x07"})
	o.event(xty.Event{Kind: xty.EventError, Message: "bad\u009b31m" + strings.Repeat("m", 1<<20)})
	o.event(xty.Event{Kind: xty.EventDisconnected, Err: errors.New("gone\x1b[H")})
	got := b.String()
	for _, want := range []string{"Hi\\x1b[2J\n", "companion (unprompted): psst\\x1b]0;t\\x07\n", "[harness error: bad\\u009b31mmmm", "[gone\\x1b[H; reconnecting]"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%.500s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\u009b") || len(got) > 8<<10 {
		t.Errorf("raw control characters or %d bytes printed", len(got))
	}
}
