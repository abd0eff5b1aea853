package main

import (
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/neuro"
)

// Issue #16: the server's display name reached the terminal raw.
func TestGame_handleEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	g := &game{out: &b}
	g.handle(neuro.StartupAck{DisplayName: "Neuro\x1b]0;owned\x07" + strings.Repeat("n", 1<<20)})
	got := b.String()
	if !strings.HasPrefix(got, "Connected to Neuro\\x1b]0;owned\\x07nnn") || strings.ContainsRune(got, 0x1b) || len(got) > 4<<10 {
		t.Fatalf("printed %d bytes: %.300q", len(got), got)
	}
}
