// Package jsonl records protocol traffic as JSON Lines, one object a
// message, for bug reports:
//
//	{"t":"2026-11-30T01:02:03.456Z","dir":"out","msg":{...}}
//
// A message that is not valid JSON is kept as a string in "raw" instead of
// "msg", so nothing is lost. Every client package in this module uses it
// behind a Recorder io.Writer option.
package jsonl

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Direction says which way a recorded message went.
type Direction string

// The two directions, seen from the game.
const (
	In  Direction = "in"
	Out Direction = "out"
)

// Recorder writes one JSON line per recorded message. A nil *Recorder
// records nothing. All methods may be called concurrently.
type Recorder struct {
	now func() time.Time

	mu  sync.Mutex // guards following
	w   io.Writer
	buf []byte
	err error
}

// New returns a Recorder writing to w, or nil when w is nil. The caller
// keeps ownership of w (Recorder never closes it).
func New(w io.Writer) *Recorder {
	if w == nil {
		return nil
	}
	return &Recorder{w: w, now: time.Now}
}

type line struct {
	T    string          `json:"t"`
	Dir  Direction       `json:"dir"`
	Note string          `json:"note,omitempty"`
	Msg  json.RawMessage `json:"msg,omitempty"`
	Raw  string          `json:"raw,omitempty"`
}

// Record writes msg with the current time and direction. It does not keep
// msg. The first write error is sticky: later calls return it and write
// nothing, so a full disk never slows the protocol down.
func (r *Recorder) Record(dir Direction, msg []byte) error {
	return r.RecordNote(dir, "", msg)
}

// RecordNote is Record with a short note (for example "dropped: duplicate").
func (r *Recorder) RecordNote(dir Direction, note string, msg []byte) error {
	if r == nil {
		return nil
	}
	l := line{T: r.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"), Dir: dir, Note: note}
	if json.Valid(msg) {
		l.Msg = msg
	} else {
		l.Raw = string(msg)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.buf = append(append(r.buf[:0], b...), '\n')
	_, r.err = r.w.Write(r.buf)
	return r.err
}
