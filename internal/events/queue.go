// Package events is the bounded event queue behind every client's
// Events, Next and Poll (neuro, xiaotangyuan): the client's goroutines
// push without blocking, and the game receives in order, blocking
// ([Queue.Next]) or once per frame ([Queue.Poll]).
package events

import (
	"context"
	"net"
	"sync"
)

// Queue is a bounded FIFO. All methods may be called concurrently. Push
// never blocks: when the queue is full it refuses, and the caller decides
// (drop and count, or answer "busy").
type Queue[T any] struct {
	max int

	mu      sync.Mutex // guards following
	items   []T
	head    int
	closed  bool
	changed chan struct{} // closed and replaced on every push and on close
}

// New returns a queue holding at most limit items (at least 1).
func New[T any](limit int) *Queue[T] {
	return &Queue[T]{max: max(limit, 1), changed: make(chan struct{})}
}

// Push appends v and reports whether it did: false when the queue is full
// or closed.
func (q *Queue[T]) Push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.items)-q.head >= q.max {
		return false
	}
	q.items = append(q.items, v)
	q.wakeLocked()
	return true
}

// Len returns how many items wait.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Full reports whether Push would refuse for want of room.
func (q *Queue[T]) Full() bool { return q.Len() >= q.max }

// Close makes Push refuse from now on. Items already queued can still be
// taken; then Next returns net.ErrClosed. It is idempotent.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.wakeLocked()
	}
}

// TryNext takes the oldest item without waiting. ok is false when there
// is none; closed is true when there is none and never will be.
func (q *Queue[T]) TryNext() (v T, ok, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return v, false, q.closed
	}
	v = q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v, true, false
}

// Changed returns a channel closed at the next Push or Close. Take it
// before TryNext, so that a push between the two is not missed.
func (q *Queue[T]) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// Next takes the oldest item, waiting for one until ctx ends. Once the
// queue is closed and empty it returns net.ErrClosed.
func (q *Queue[T]) Next(ctx context.Context) (T, error) {
	for {
		ch := q.Changed()
		v, ok, closed := q.TryNext()
		switch {
		case ok:
			return v, nil
		case closed:
			return v, net.ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v, ctx.Err()
		}
	}
}

// Poll appends every waiting item to dst, oldest first, and returns it.
func (q *Queue[T]) Poll(dst []T) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	dst = append(dst, q.items[q.head:]...)
	clear(q.items)
	q.items, q.head = q.items[:0], 0
	return dst
}

func (q *Queue[T]) wakeLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}
