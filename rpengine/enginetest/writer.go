package enginetest

import (
	"context"
	"errors"
	"sync"
	"time"
)

// writeTimeout bounds each write of the engine.
const writeTimeout = 10 * time.Second

// maxQueued bounds the messages waiting for the writer. A browser's
// WebSocket.send never blocks: it queues (bufferedAmount) however much the
// game leaves unread. The fake queues too, so that its reader never
// blocks on a write, which over an unbuffered in-memory pipe would
// deadlock with a game whose reader writes acks; past maxQueued, emit
// waits for room, so a game that never reads cannot grow it without
// bound.
const maxQueued = 4096

// outbox is the connection's queue of messages for its writer goroutine,
// in order.
type outbox struct {
	room chan struct{} // one token per free place
	wake chan struct{} // signalled when a message is queued

	mu sync.Mutex // guards following
	q  []outgoing
}

// outgoing is one queued message; done, if not nil, receives the write's
// result.
type outgoing struct {
	b    []byte
	done chan error
}

func newOutbox() *outbox {
	o := &outbox{room: make(chan struct{}, maxQueued), wake: make(chan struct{}, 1)}
	for range maxQueued {
		o.room <- struct{}{}
	}
	return o
}

// queue appends b, waiting, bounded by ctx, for room.
func (o *outbox) queue(ctx context.Context, b []byte, done chan error) error {
	select {
	case <-o.room:
	case <-ctx.Done():
		return ctx.Err()
	}
	o.mu.Lock()
	o.q = append(o.q, outgoing{b, done})
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// take removes and returns every queued message.
func (o *outbox) take() []outgoing {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.q
	o.q = nil
	return q
}

// writeLoop writes queued messages in order until the connection ends. A
// failed write is logged and reported to the sender who waits for it;
// the WebSocket closes itself on a failed write, which ends the reader.
func (cn *conn) writeLoop() {
	defer cn.wg.Done()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-cn.out.wake:
		}
		for _, m := range cn.out.take() {
			err := cn.ctx.Err()
			if err == nil {
				ctx, cancel := context.WithTimeout(cn.ctx, writeTimeout)
				err = cn.write(ctx, m.b)
				cancel()
			}
			cn.out.room <- struct{}{}
			if m.done != nil {
				m.done <- err
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				cn.e.opts.Logf("enginetest: write: %v", err)
			}
		}
	}
}
