package transport

import (
	"errors"
	"sync"
	"time"
)

// Writer is a session's outbound queue. One goroutine of its own writes
// the queued messages to the transport in order, so that the connection's
// reader never waits for a write (issue #17; coder/websocket's read loop
// hands its control frames to the writer the same way): the reader posts
// its acks and answers and goes on. A game's goroutine that sends a
// request waits for its own message to be written, as before.
//
// Overflow policy: the messages the reader posted and nobody waits for
// are bounded by maxPosted. An engine that sends faster than the game can
// write its acks fills that (a flood of small messages does), and then
// the reader waits for the writer to take the queue, which slows the
// engine down as TCP would. If the writer takes nothing for WriteTimeout,
// the engine has stopped reading what the game writes: its connection is
// closed with 1008 and the session ends with ErrConnectionLost. Messages
// a game's goroutine waits for are bounded by those goroutines.
type Writer struct {
	t       Transport
	timeout time.Duration // WriteTimeout: how long a full queue may stay full; <= 0 for ever
	wake    chan struct{} // one slot: something was queued, or stop
	done    chan struct{} // closed when Run returns: nothing more is written

	mu     sync.Mutex // guards following
	queue  []outbound
	posted int           // queued messages nobody waits for
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

// ErrNotReading is why a connection is closed when the engine stopped
// reading while the game's posts piled up.
var ErrNotReading = errors.New("the engine is not reading: 1024 messages waited a whole write timeout to be written")

// WriteError is a transport's failure to write, as opposed to the end of
// the session before the write.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// NewWriter returns the queue that writes to t, a write at a time, each
// bounded by the transport itself; timeout is WriteTimeout, how long a
// full queue may stay full (<= 0 for ever).
func NewWriter(t Transport, timeout time.Duration) *Writer {
	return &Writer{t: t, timeout: timeout, wake: make(chan struct{}, 1), done: make(chan struct{})}
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
		for _, o := range batch {
			if err := w.t.Send(o.msg); o.done != nil {
				if err != nil {
					err = &WriteError{err}
				}
				o.done <- err
			}
		}
		w.mu.Lock()
		for i, o := range batch {
			if o.reuse && len(w.spare) < maxSpare && cap(o.msg) <= maxSpareBytes {
				w.spare = append(w.spare, o.msg[:0])
			}
			batch[i] = outbound{}
		}
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
	w.queue, w.posted = nil, 0
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
func (w *Writer) PostReusable(msg []byte) bool { return w.queueMessage(msg, true) }

// Post queues msg without waiting for it to be written; the reader's way
// to write. Only when maxPosted messages wait does it wait for the writer
// to take them (see the overflow policy), and it reports false when that
// took longer than the write timeout: the caller then closes the
// connection.
func (w *Writer) Post(msg []byte) bool { return w.queueMessage(msg, false) }

func (w *Writer) queueMessage(msg []byte, reuse bool) bool {
	w.mu.Lock()
	for w.ended == nil && w.posted >= maxPosted {
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		if !w.waitRoom(room) {
			return false
		}
		w.mu.Lock()
	}
	defer w.mu.Unlock()
	if w.ended != nil {
		return true // dropped with the connection; nothing to close
	}
	w.posted++
	w.queue = append(w.queue, outbound{msg: msg, reuse: reuse})
	w.signal()
	return true
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
// queue in the order it registered messages.
func (w *Writer) Enqueue(msg []byte) <-chan error {
	done := make(chan error, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended != nil {
		done <- w.ended
		return done
	}
	w.queue = append(w.queue, outbound{msg: msg, done: done})
	w.signal()
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
