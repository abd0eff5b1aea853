package main

import (
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/neurosan"
)

// Issue #16: text from the server reached the terminal raw. An
// intermediate message's path, type and text are escaped.
func TestPrintStep_escapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printStep(&b, &neurosan.ChatMessage{Type: "AGENT\x1b[2J", Text: "step\x1b]0;owned\x07\nnext",
		Origin: []neurosan.Origin{{Tool: "front\u009b31m"}}})
	got := b.String()
	want := "  [front\\u009b31m AGENT\\x1b[2J] step\\x1b]0;owned\\x07\nnext\n"
	if got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}
