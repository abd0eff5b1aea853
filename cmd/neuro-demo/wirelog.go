package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// wireLog turns the SDK's JSONL recording into readable lines.
type wireLog struct {
	mu      sync.Mutex // guards following
	w       io.Writer
	stopped bool
}

// stop drops every line from now on.
func (l *wireLog) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}

func (l *wireLog) Write(p []byte) (int, error) {
	var rec struct {
		Dir  string          `json:"dir"`
		Note string          `json:"note"`
		Msg  json.RawMessage `json:"msg"`
		Raw  string          `json:"raw"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(p), &rec); err != nil {
		return len(p), nil
	}
	arrow := "game -> neuro"
	if rec.Dir == "in" {
		arrow = "neuro -> game"
	}
	body := string(rec.Msg)
	if body == "" {
		body = rec.Raw
	}
	if rec.Note != "" {
		body += "  (" + rec.Note + ")"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return len(p), nil
	}
	fmt.Fprintf(l.w, "  [%s] %s\n", arrow, peertext.Text(body)) // escaped (issue #16)
	return len(p), nil
}
