package enginetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	room  chan struct{} // one token per free place
	wake  chan struct{} // signalled when a message is queued
	dones sync.Pool     // of chan error, for senders that wait (conn.send)

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

// take removes and returns every queued message; last, the batch the
// writer took before and wrote, becomes the queue (the two alternate).
func (o *outbox) take(last []outgoing) []outgoing {
	clear(last) // the written messages
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.q
	o.q = last[:0]
	return q
}

// done returns a channel for a write's result; putDone gives back one
// whose result was received.
func (o *outbox) done() chan error {
	if c, ok := o.dones.Get().(chan error); ok {
		return c
	}
	return make(chan error, 1)
}

func (o *outbox) putDone(c chan error) { o.dones.Put(c) }

// writeLoop writes queued messages in order until the connection ends. A
// failed write is logged and reported to the sender who waits for it;
// the WebSocket closes itself on a failed write, which ends the reader.
//
// Each write is bounded by writeTimeout with one timer of the loop's,
// reset per write, that closes the connection when it fires (the write
// then fails), as a context's expiry did; the end of the connection's
// context closes it too (connect). A context per write cost a timer and
// coder/websocket an AfterFunc per message (issue #24).
func (cn *conn) writeLoop() {
	defer cn.wg.Done()
	var expired atomic.Bool
	deadline := time.AfterFunc(time.Hour, func() {
		expired.Store(true)
		cn.closeNow()
	})
	deadline.Stop()
	defer deadline.Stop()
	var batch []outgoing
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-cn.out.wake:
		}
		batch = cn.out.take(batch)
		for _, m := range batch {
			err := cn.ctx.Err()
			if err == nil {
				deadline.Reset(writeTimeout)
				err = cn.write(context.Background(), m.b)
				deadline.Stop()
				if err != nil && expired.Load() {
					err = fmt.Errorf("%w after %v: %w", context.DeadlineExceeded, writeTimeout, err)
				}
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
