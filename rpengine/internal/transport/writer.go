package transport

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Writer is a session's outbound queue. One goroutine of its own writes
// the queued messages to the transport in order, so that the connection's
// reader never waits for a write (issue #17; coder/websocket's read loop
// hands its control frames to the writer the same way): the reader posts
// its acks and answers and goes on. A game's goroutine that sends a
// request waits for its own message to be written, as before.
//
// Overflow policy, in bytes: every message queued and not yet written,
// posted or enqueued, counts until its write returns, and a message that
// would take the total past MaxQueuedBytes is not queued: the engine is a
// slow consumer, too far behind what the game writes (issue #31: the
// acks of messages with 1 MiB messageIds piled up to 918 MiB). The
// writer stops, whoever waits for a write gets a *WriteError wrapping
// ErrNotReading, and full is called: the session closes the connection
// with 1008 and ends. A message alone always fits (an 8 MiB one may wait
// behind another).
//
// In count: the messages the reader posted and nobody waits for are
// bounded by maxPosted. An engine that sends faster than the game can
// write its acks fills that (a flood of small messages does), and then
// the reader waits for the writer to take the queue, which slows the
// engine down as TCP would. If the writer takes nothing for WriteTimeout,
// the engine has stopped reading what the game writes: the writer stops
// as at the byte bound. Messages a game's goroutine waits for are counted
// by those goroutines.
type Writer struct {
	t       Transport
	timeout time.Duration // WriteTimeout: how long a full queue may stay full; <= 0 for ever
	full    func(error)   // called once, with no lock held, when the writer stops at a bound
	wake    chan struct{} // one slot: something was queued, or stop
	done    chan struct{} // closed when Run returns: nothing more is written

	mu     sync.Mutex // guards following
	queue  []outbound
	posted int           // queued messages nobody waits for
	bytes  int           // bytes queued or being written
	busy   bool          // the goroutine is writing what it took from queue
	ended  error         // set by stop: no more writes
	idle   chan struct{} // closed when the queue is written (drained)
	room   chan struct{} // closed when the goroutine takes the queue
	spare  [][]byte      // written buffers of reusable messages (see Buffer)
}

// Done returns a channel closed once Run has returned: nothing more is
// written.
func (w *Writer) Done() <-chan struct{} { return w.done }

// outbound is one queued message; done, when not nil, receives the
// write's result. reuse says msg came from Buffer and goes back once
// written.
type outbound struct {
	msg   []byte
	done  chan error
	reuse bool
}

// maxSpare bounds the buffers a writer keeps for reuse, and
// maxSpareBytes their size (an ack is about 300 bytes).
const (
	maxSpare      = 64
	maxSpareBytes = 1 << 10
)

// maxPosted bounds the messages posted and not yet written.
const maxPosted = 1024

// MaxQueuedBytes bounds the bytes of a session's messages queued and not
// yet written: twice the largest message.
const MaxQueuedBytes = 2 * wire.MaxMessageBytes

// ErrNotReading is why a session ends when the engine stopped reading
// while the game's messages piled up (see Writer's overflow policy).
var ErrNotReading = errors.New("the engine is not reading")

// WriteError is a transport's failure to write, as opposed to the end of
// the session before the write.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// NewWriter returns the queue that writes to t, a write at a time, each
// bounded by the transport itself; timeout is WriteTimeout, how long a
// full queue may stay full (<= 0 for ever). full is called once, on the
// goroutine that queued, when the writer stops at a bound, with why (an
// error wrapping ErrNotReading).
func NewWriter(t Transport, timeout time.Duration, full func(error)) *Writer {
	return &Writer{t: t, timeout: timeout, full: full, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Run writes queued messages until Stop. It is the writer's goroutine.
func (w *Writer) Run() {
	defer close(w.done)
	var batch []outbound
	for range w.wake {
		w.mu.Lock()
		if w.ended != nil {
			w.failLocked()
			w.mu.Unlock()
			return
		}
		batch, w.queue = w.queue, batch[:0]
		w.posted = 0
		w.busy = len(batch) > 0
		if w.room != nil {
			close(w.room)
			w.room = nil
		}
		w.mu.Unlock()
		for i, o := range batch {
			if err := w.t.Send(o.msg); o.done != nil {
				if err != nil {
					err = &WriteError{err}
				}
				o.done <- err
			}
			w.mu.Lock()
			w.bytes -= len(o.msg)
			if o.reuse && len(w.spare) < maxSpare && cap(o.msg) <= maxSpareBytes {
				w.spare = append(w.spare, o.msg[:0])
			}
			w.mu.Unlock()
			batch[i] = outbound{}
		}
		w.mu.Lock()
		w.busy = false
		if len(w.queue) > 0 {
			w.signal()
		} else if w.idle != nil {
			close(w.idle)
			w.idle = nil
		}
		w.mu.Unlock()
	}
}

// failLocked answers every waiting sender with the session's end.
func (w *Writer) failLocked() {
	for _, o := range w.queue {
		if o.done != nil {
			o.done <- w.ended
		}
	}
	w.queue, w.posted, w.bytes = nil, 0, 0
	if w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
}

func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Buffer returns an empty buffer for a message to PostReusable: one the
// writer wrote already, or a new one.
func (w *Writer) Buffer() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := len(w.spare); k > 0 {
		b := w.spare[k-1]
		w.spare = w.spare[:k-1]
		return b
	}
	return make([]byte, 0, 512) // an ack is about 300 bytes
}

// PostReusable is Post of a message in a buffer from Buffer, which the
// writer takes back once it is written: the reader acks every engine
// message without allocating (issue #24).
func (w *Writer) PostReusable(msg []byte) { w.queueMessage(msg, true) }

// Post queues msg without waiting for it to be written; the reader's way
// to write. Only when maxPosted messages wait does it wait for the writer
// to take them, at most the write timeout (see the overflow policy).
// After the writer stopped, msg is dropped.
func (w *Writer) Post(msg []byte) { w.queueMessage(msg, false) }

func (w *Writer) queueMessage(msg []byte, reuse bool) {
	w.mu.Lock()
	for w.ended == nil && w.posted >= maxPosted {
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		if !w.waitRoom(room) {
			w.overflow(fmt.Errorf("%w: %d messages waited a whole write timeout (%v) to be written", ErrNotReading, maxPosted, w.timeout))
			return
		}
		w.mu.Lock()
	}
	_, err := w.addLocked(outbound{msg: msg, reuse: reuse})
	w.mu.Unlock()
	if err != nil {
		w.overflow(err)
	}
}

// addLocked queues o and reports whether it did: not once the writer
// stopped, nor past the byte bound, which is the error.
func (w *Writer) addLocked(o outbound) (bool, error) {
	switch {
	case w.ended != nil:
		return false, nil
	case w.bytes > 0 && w.bytes+len(o.msg) > MaxQueuedBytes:
		return false, fmt.Errorf("%w: %d bytes wait to be written, and %d more would pass the bound of %d MiB",
			ErrNotReading, w.bytes, len(o.msg), MaxQueuedBytes>>20)
	}
	w.bytes += len(o.msg)
	if o.done == nil {
		w.posted++
	}
	w.queue = append(w.queue, o)
	w.signal()
	return true, nil
}

// overflow stops the writer at a bound, because of err, and tells full.
func (w *Writer) overflow(err error) {
	w.mu.Lock()
	first := w.ended == nil
	if first {
		w.ended = &WriteError{err}
		w.signal()
	}
	w.mu.Unlock()
	if first && w.full != nil {
		w.full(err)
	}
}

// waitRoom waits for room, at most the write timeout.
func (w *Writer) waitRoom(room <-chan struct{}) bool {
	if w.timeout <= 0 {
		<-room
		return true
	}
	t := time.NewTimer(w.timeout)
	defer t.Stop()
	select {
	case <-room:
		return true
	case <-t.C:
		return false
	}
}

// Enqueue queues msg and returns the channel its write's result arrives
// on. It does not wait, so that a caller holding the session's lock can
// queue in the order it registered messages. A message past the byte
// bound stops the writer (see the overflow policy).
func (w *Writer) Enqueue(msg []byte) <-chan error {
	done := make(chan error, 1)
	w.mu.Lock()
	queued, err := w.addLocked(outbound{msg: msg, done: done})
	w.mu.Unlock()
	if err != nil {
		w.overflow(err)
	}
	if !queued {
		w.mu.Lock()
		done <- w.ended
		w.mu.Unlock()
	}
	return done
}

// Stop ends the writer: what is queued is not written, and whoever waits
// for it gets err. It is idempotent and does not wait.
func (w *Writer) Stop(err error) {
	w.mu.Lock()
	if w.ended == nil {
		w.ended = err
		w.signal()
	}
	w.mu.Unlock()
}

// Drained returns a channel closed once everything queued so far is
// written (or the writer stopped): for tests that look at what was sent.
func (w *Writer) Drained() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	if (len(w.queue) == 0 && !w.busy) || w.ended != nil {
		close(w.idle)
		ch := w.idle
		w.idle = nil
		return ch
	}
	return w.idle
}
