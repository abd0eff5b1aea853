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
// says how a card travelled (snapshot, patch or reference) as the server
// actually sent it rather than as a guess. The server writes its Recorder
// from a goroutine of its own, so a Reply may return before the line of
// its request is written: said then asks for the transfer to be said as
// soon as it is recorded (at the latest when the server shuts down).
type tap struct {
	rec io.Writer                               // nil without --record
	say func(mode string, size int, first bool) // prints a transfer

	mu    sync.Mutex // guards following
	mode  string     // of the last outbound card descriptor
	size  int        // its size
	seq   int        // counts outbound card descriptors
	shown int        // seq of the last one said
	due   bool       // said was called before its transfer was recorded
}

// said is called once a request that carried a card was accepted: the
// transfer is said now if it was recorded, else when it is.
func (t *tap) said() {
	t.mu.Lock()
	if t.seq == t.shown {
		t.due = true
		t.mu.Unlock()
		return
	}
	mode, size, first := t.takeLocked()
	t.mu.Unlock()
	t.say(mode, size, first)
}

// takeLocked marks the last transfer said and returns it.
func (t *tap) takeLocked() (mode string, size int, first bool) {
	first, t.shown, t.due = t.shown == 0, t.seq, false
	return t.mode, t.size, first
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
			t.mode, t.size = d.Mode, len(l.Msg.Card)
			t.seq++
			due, first := t.due, false
			if due {
				_, _, first = t.takeLocked()
			}
			t.mu.Unlock()
			if due {
				t.say(d.Mode, len(l.Msg.Card), first)
			}
		}
	}
	return len(p), nil
}
