package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// tap is the server's Recorder (internal/jsonl lines, one Write a line).
// It copies every line to the --record file, if any, and notes the card
// transfer mode of each outbound message that carries a card, so the demo
// can say how a card travelled (snapshot, patch or reference) as the
// server actually sent it rather than as a guess.
type tap struct {
	rec io.Writer // nil without --record

	mu    sync.Mutex // guards following
	mode  string     // of the last outbound card descriptor
	bytes int        // its size
	seq   int        // counts outbound card descriptors
}

func (t *tap) Write(p []byte) (int, error) {
	if t.rec != nil {
		if _, err := t.rec.Write(p); err != nil {
			return 0, err
		}
	}
	if bytes.Contains(p, []byte(`"dir":"out"`)) && bytes.Contains(p, []byte(`"card":`)) {
		var l struct {
			Msg struct {
				Card json.RawMessage `json:"card"`
			} `json:"msg"`
		}
		var d struct {
			Mode string `json:"mode"`
		}
		if json.Unmarshal(p, &l) == nil && len(l.Msg.Card) > 0 && json.Unmarshal(l.Msg.Card, &d) == nil {
			t.mu.Lock()
			t.mode, t.bytes = d.Mode, len(l.Msg.Card)
			t.seq++
			t.mu.Unlock()
		}
	}
	return len(p), nil
}

// last returns the last card transfer sent and a counter that changes with
// every one.
func (t *tap) last() (mode string, size, seq int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode, t.bytes, t.seq
}
