// Package jsonl records protocol traffic as JSON Lines, one object a
// message, for bug reports:
//
//	{"t":"2026-11-30T01:02:03.456Z","dir":"out","msg":{...}}
//
// A message that is not valid JSON is kept as a string in "raw" instead of
// "msg", so nothing is lost. Every client package in this module uses it
// behind a Recorder io.Writer option, through a [Queue]: a goroutine of
// the Queue's own writes the lines, so a slow or blocked writer never
// holds up a connection (issue #17).
package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// MaxQueued is the bound every client in this module gives its Queue: at
// most 32 MiB of lines wait for a slow writer.
const MaxQueued = 32 << 20

// CloseStall is how long Close waits for a writer that makes no progress
// (a Write that has not returned) before it gives up on the lines still
// queued.
const CloseStall = 5 * time.Second

// Direction says which way a recorded message went.
type Direction string

// The two directions, seen from the game.
const (
	In  Direction = "in"
	Out Direction = "out"
)

type line struct {
	T    string          `json:"t"`
	Dir  Direction       `json:"dir"`
	Note string          `json:"note,omitempty"`
	Msg  json.RawMessage `json:"msg,omitempty"` // written by encode after the others
	Raw  string          `json:"raw,omitempty"`
}

// encode returns the line recording msg, without its newline: line's
// fields in its order, msg compacted in the pass that checks it (the
// Queue's goroutine runs it for every message, 44 KB for an audio chunk).
func encode(now time.Time, dir Direction, note string, msg []byte) ([]byte, error) {
	l := line{T: now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Dir: dir, Note: note}
	head, err := json.Marshal(l)
	if err != nil || len(msg) == 0 {
		return head, err
	}
	b := bytes.NewBuffer(make([]byte, 0, len(head)+len(`,"msg":`)+len(msg)+1))
	b.Write(head[:len(head)-1])
	b.WriteString(`,"msg":`)
	if json.Compact(b, msg) != nil {
		l.Raw = string(msg)
		return json.Marshal(l)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Queue records protocol messages as JSON Lines, one Write a line, without
// the caller ever waiting for the writer: Record copies the message and
// queues it, and a goroutine of the Queue's own encodes and writes the
// queued lines in order, so that a connection's reader that records what
// it reads never waits for a slow io.Writer (issue #17). At most maxBytes
// of lines wait; past that, lines are dropped and counted, and a line saying how
// many is written when there is room again. The first write error is
// sticky: later lines are not written, and Record returns it. A nil
// *Queue records nothing. All methods may be called concurrently.
type Queue struct {
	w    io.Writer
	max  int
	now  func() time.Time
	wake chan struct{} // one slot
	done chan struct{} // closed when the goroutine returns

	mu        sync.Mutex // guards following
	lines     []record
	bytes     int
	dropped   int
	unwritten int // lines queued and not written yet, in lines or in the goroutine's hands
	writes    int // Writes that returned
	started   bool
	closed    bool
	abandoned bool // Close gave up on a stalled writer
	err       error
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
// nothing, and so does a call after Close. Lines recorded before Start
// wait for it.
func (q *Queue) Start() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.closed {
		return
	}
	q.startLocked()
}

func (q *Queue) startLocked() {
	q.started = true
	go q.run()
}

// Record queues msg with the current time and direction. It does not
// keep msg. It returns the sticky write error, if any.
func (q *Queue) Record(dir Direction, msg []byte) error {
	return q.RecordNote(dir, "", msg)
}

// RecordNote is Record with a short note (for example "dropped:
// duplicate"); msg may be nil.
//
// It copies msg and queues it with the time: the goroutine encodes the
// line, so that what a connection's reader pays to record a message is
// a copy, not the checks of encoding/json (for a 44 KB audio chunk they
// cost more than the reader's own decoding; issue #36).
func (q *Queue) RecordNote(dir Direction, note string, msg []byte) error {
	if q == nil {
		return nil
	}
	r := record{q.now(), dir, note, bytes.Clone(msg)}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.err != nil:
		return q.err
	case q.closed:
		return nil
	case q.bytes+r.size() > q.max:
		q.dropped++
		return nil
	}
	if q.dropped > 0 {
		q.queueLocked(q.droppedLine())
	}
	q.queueLocked(r)
	return nil
}

// record is a line waiting to be encoded and written.
type record struct {
	t    time.Time
	dir  Direction
	note string
	msg  []byte
}

// size is about the length of r's line, for the bound.
func (r record) size() int {
	return len(r.msg) + len(r.note) + len(`{"t":"2006-01-02T15:04:05.000Z","dir":"out","note":"","msg":}`) + 1
}

func (q *Queue) queueLocked(r record) {
	q.lines = append(q.lines, r)
	q.bytes += r.size()
	q.unwritten++
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// droppedLine is the note about lines dropped since the last one; it
// resets the count. q.mu must be held.
func (q *Queue) droppedLine() record {
	r := record{q.now(), "", fmt.Sprintf("recorder: %d lines dropped: the writer was slower than the traffic", q.dropped), nil}
	q.dropped = 0
	return r
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
// closed and everything is written, or Close gave up on the writer.
func (q *Queue) flush() bool {
	q.mu.Lock()
	lines, closed := q.lines, q.closed
	q.lines, q.bytes = nil, 0
	if closed && q.dropped > 0 {
		lines = append(lines, q.droppedLine())
		q.unwritten++
	}
	err := q.err
	q.mu.Unlock()
	for _, r := range lines {
		if err != nil {
			break
		}
		var b []byte
		if b, err = encode(r.t, r.dir, r.note, r.msg); err == nil {
			_, err = q.w.Write(append(b, '\n'))
		}
		q.mu.Lock()
		q.writes++
		q.unwritten--
		abandoned := q.abandoned
		q.mu.Unlock()
		if abandoned {
			return false
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
	}
	return !closed
}

// Close writes the lines still queued and stops the goroutine, waiting
// for it, as long as the writer makes progress: when no Write returned
// for [CloseStall], Close gives up, the lines still queued are not
// written, and the error says how many; the goroutine, stuck in the
// writer's Write, ends when that Write returns, writing nothing more
// (a Write that never returns keeps it forever: the writer's to fix).
// Close returns the sticky write error otherwise. It is idempotent (a
// later call waits as the first does and returns nil); lines recorded
// after it are dropped.
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	first := !q.closed
	q.closed = true
	if !q.started {
		q.startLocked() // to write what was recorded before Start
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	err := q.wait()
	if !first {
		return nil
	}
	return err
}

// wait waits for the goroutine to end, or for the writer to stall.
func (q *Queue) wait() error {
	q.mu.Lock()
	last, abandoned := q.writes, q.abandoned
	q.mu.Unlock()
	if abandoned {
		return nil
	}
	t := time.NewTimer(CloseStall)
	defer t.Stop()
	for {
		select {
		case <-q.done:
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.err
		case <-t.C:
		}
		q.mu.Lock()
		if q.abandoned || q.writes == last {
			q.abandoned = true
			n := q.unwritten
			q.mu.Unlock()
			return fmt.Errorf("jsonl: recorder: the writer did not return for %v: %d lines not written", CloseStall, n)
		}
		last = q.writes
		q.mu.Unlock()
		t.Reset(CloseStall)
	}
}
