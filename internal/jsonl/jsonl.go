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
	"fmt"
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
	b, err := encode(r.now(), dir, note, msg)
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

// encode returns the line recording msg, without its newline.
func encode(now time.Time, dir Direction, note string, msg []byte) ([]byte, error) {
	l := line{T: now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Dir: dir, Note: note}
	if json.Valid(msg) {
		l.Msg = msg
	} else {
		l.Raw = string(msg)
	}
	return json.Marshal(l)
}

// Queue records as a Recorder does, except that the caller never waits
// for the writer: Record encodes the line and queues it, and a goroutine
// of the Queue's own writes the queued lines in order, so that a
// connection's reader that records what it reads never waits for a slow
// io.Writer (issue #17). At most maxBytes of lines wait; past that, lines
// are dropped and counted, and a line saying how many is written when
// there is room again. The first write error is sticky, as a Recorder's.
// A nil *Queue records nothing. All methods may be called concurrently.
type Queue struct {
	w    io.Writer
	max  int
	now  func() time.Time
	wake chan struct{} // one slot
	done chan struct{} // closed when the goroutine returns

	mu      sync.Mutex // guards following
	lines   [][]byte
	bytes   int
	dropped int
	started bool
	closed  bool
	err     error
}

// NewQueue returns a Queue writing to w, or nil when w is nil; it starts
// nothing (see Start). The caller keeps ownership of w.
func NewQueue(w io.Writer, maxBytes int) *Queue {
	if w == nil {
		return nil
	}
	return &Queue{w: w, max: maxBytes, now: time.Now, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Start starts the goroutine that writes the lines; later calls do
// nothing. Lines recorded before Start wait for it.
func (q *Queue) Start() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.closed {
		return
	}
	q.started = true
	go q.run()
}

// Record queues msg with the current time and direction. It does not
// keep msg. It returns the sticky write error, if any.
func (q *Queue) Record(dir Direction, msg []byte) error {
	if q == nil {
		return nil
	}
	b, err := encode(q.now(), dir, "", msg)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.err != nil:
		return q.err
	case q.closed:
		return nil
	case q.bytes+len(b)+1 > q.max:
		q.dropped++
		return nil
	}
	if q.dropped > 0 {
		q.queueLocked(q.droppedLine())
	}
	q.queueLocked(b)
	return nil
}

func (q *Queue) queueLocked(b []byte) {
	b = append(b, '\n')
	q.lines = append(q.lines, b)
	q.bytes += len(b)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// droppedLine is the note about lines dropped since the last one; it
// resets the count. q.mu must be held.
func (q *Queue) droppedLine() []byte {
	b, _ := encode(q.now(), "", fmt.Sprintf("recorder: %d lines dropped: the writer was slower than the traffic", q.dropped), nil)
	q.dropped = 0
	return b
}

// run writes queued lines until Close.
func (q *Queue) run() {
	defer close(q.done)
	for range q.wake {
		if !q.flush() {
			return
		}
	}
}

// flush writes what is queued, and reports false once the Queue is
// closed and everything is written.
func (q *Queue) flush() bool {
	q.mu.Lock()
	lines, closed := q.lines, q.closed
	q.lines, q.bytes = nil, 0
	if closed && q.dropped > 0 {
		lines = append(lines, append(q.droppedLine(), '\n'))
	}
	err := q.err
	q.mu.Unlock()
	for _, b := range lines {
		if err != nil {
			break
		}
		_, err = q.w.Write(b)
	}
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	return !closed
}

// Close writes the lines still queued and stops the goroutine, waiting
// for it. It is idempotent; lines recorded after it are dropped.
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	started := q.started
	q.mu.Unlock()
	if !started {
		q.flush()
	} else {
		select {
		case q.wake <- struct{}{}:
		default:
		}
		<-q.done
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
