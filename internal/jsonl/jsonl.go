// Package jsonl records protocol traffic as JSON Lines, one object a
// message, for bug reports:
//
//	{"t":"2026-11-30T01:02:03.456Z","dir":"out","msg":{...}}
//
// A message that is not valid JSON is kept as a string in "raw" instead of
// "msg", so nothing is lost. Lines with "dir":"game" are the game's own
// moments, not messages: a "note" names each, its "msg" holds its fields. Every client package in this module uses it
// behind a Recorder io.Writer option, through a [Queue]: a goroutine of
// the Queue's own writes the lines, so a slow or blocked writer never
// holds up a connection (issue #17).
package jsonl

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// MaxQueued is the bound every client in this module gives its Queue: at
// most 32 MiB of lines wait for a slow writer.
const MaxQueued = 32 << 20

// maxKept bounds the buffer the Queue's goroutine keeps for its next
// line (an audio chunk's is 44 KB).
const maxKept = 256 << 10

// CloseStall is how long Close waits for a writer that makes no progress
// (a Write that has not returned) before it gives up on the lines still
// queued.
const CloseStall = 5 * time.Second

// Direction says which way a recorded message went.
type Direction string

// The directions, seen from the game.
const (
	In   Direction = "in"
	Out  Direction = "out"
	Game Direction = "game" // the game's own moments, not messages (rpengine/inspect reads them)
)

type line struct {
	T    string          `json:"t"`
	Dir  Direction       `json:"dir"`
	Note string          `json:"note,omitempty"`
	Msg  json.RawMessage `json:"msg,omitempty"` // written by encode after the others
	Raw  string          `json:"raw,omitempty"`
}

// encode appends r's line to dst, with its newline: line's fields in its
// order, then the message. A message known to be valid JSON (r.checked,
// or one the Queue's valid accepts) goes in as it is, unless it holds a
// line break; any other is compacted in the pass that checks it (the
// Queue's goroutine runs this for every message, 44 KB for an audio
// chunk, and encoding/json reads about 100 MB/s).
func encode(dst []byte, r record, valid func([]byte) bool) ([]byte, error) {
	l := line{T: r.t.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Dir: r.dir, Note: r.note}
	head, err := json.Marshal(l)
	if err != nil || len(r.msg) == 0 {
		return append(append(dst, head...), '\n'), err
	}
	b := bytes.NewBuffer(slices.Grow(dst, r.size()))
	b.Write(head[:len(head)-1])
	b.WriteString(`,"msg":`)
	switch {
	case r.pcm != nil:
		body := bytes.TrimSuffix(bytes.TrimSpace(r.msg), []byte("}"))
		b.Write(body)
		if len(bytes.TrimSpace(body)) > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"data":"`)
		pcm := make([]byte, 2*len(r.pcm))
		for i, v := range r.pcm {
			binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
		}
		b.Write(base64.StdEncoding.AppendEncode(b.AvailableBuffer(), pcm))
		b.WriteString(`"}`)
	case (r.checked || valid != nil && valid(r.msg)) && bytes.IndexByte(r.msg, '\n') < 0 && bytes.IndexByte(r.msg, '\r') < 0:
		b.Write(r.msg)
	case json.Compact(b, r.msg) != nil:
		l.Raw = string(r.msg)
		head, err = json.Marshal(l)
		return append(append(dst, head...), '\n'), err
	}
	b.WriteString("}\n")
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
	w     io.Writer
	max   int
	now   func() time.Time
	valid func(msg []byte) bool // set before Start (SetValid)
	buf   []byte                // the goroutine's: the line it writes
	wake  chan struct{}         // one slot
	done  chan struct{}         // closed when the goroutine returns

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

// SetValid gives the Queue a fast test of the messages Record queues,
// run on its goroutine: a message valid accepts must be valid JSON, and
// is written as it is (unless it holds a line break) instead of going
// through encoding/json's check and compaction; valid may refuse valid
// JSON, which is then checked as usual. rpengine's server passes its
// envelope scanner, which reads an engine's 44 KB audio chunk in
// microseconds. Call it before Start.
func (q *Queue) SetValid(valid func(msg []byte) bool) {
	if q != nil {
		q.valid = valid
	}
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
	return q.queue(record{t: q.now(), dir: dir, note: note, msg: bytes.Clone(msg)})
}

// RecordChecked is RecordNote for a message known to be valid JSON, one
// the caller encoded: its line carries it as it is, without the check
// and compaction that cost encoding/json a pass over every other message
// (unless it holds a line break, which is compacted away).
func (q *Queue) RecordChecked(dir Direction, note string, msg []byte) error {
	if q == nil {
		return nil
	}
	return q.queue(record{t: q.now(), dir: dir, note: note, msg: bytes.Clone(msg), checked: true})
}

// RecordSamples is RecordChecked for a JSON object msg to which the line
// adds a last member, "data": samples as little-endian 16-bit PCM in
// base64 (a reply.audio.chunk's encoding), about 2.7 bytes of line a
// sample. The caller pays a copy of the samples; the Queue's goroutine
// encodes them.
func (q *Queue) RecordSamples(dir Direction, note string, msg []byte, samples []int16) error {
	if q == nil {
		return nil
	}
	return q.queue(record{t: q.now(), dir: dir, note: note, msg: bytes.Clone(msg), pcm: append(make([]int16, 0, len(samples)), samples...), checked: true})
}

// queue queues r, or drops and counts it past the bound.
func (q *Queue) queue(r record) error {
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
	t       time.Time
	dir     Direction
	note    string
	msg     []byte
	pcm     []int16 // RecordSamples' samples, or nil
	checked bool    // msg is valid JSON
}

// size is about the length of r's line, for the bound.
func (r record) size() int {
	n := len(r.msg) + len(r.note) + len(`{"t":"2006-01-02T15:04:05.000Z","dir":"game","note":"","msg":}`) + 1
	if r.pcm != nil {
		n += base64.StdEncoding.EncodedLen(2*len(r.pcm)) + len(`,"data":""`)
	}
	return n
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
	r := record{t: q.now(), note: fmt.Sprintf("recorder: %d lines dropped: the writer was slower than the traffic", q.dropped)}
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
		if q.buf, err = encode(q.buf[:0], r, q.valid); err == nil {
			_, err = q.w.Write(q.buf)
		}
		if cap(q.buf) > maxKept {
			q.buf = nil // after a long line, hold nothing
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
