package transport

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// stuck is an engine that reads nothing until release is closed.
type stuck struct {
	release chan struct{}
	written atomic.Int64 // bytes
}

func (s *stuck) Send(msg []byte) error {
	<-s.release
	s.written.Add(int64(len(msg)))
	return nil
}

func (s *stuck) Close(int, string) {}

// Issue #31, item 1: the game's own messages count toward the byte
// bound as the reader's posts do. Two messages at the 8 MiB limit fit
// (one being written, one queued); the next message, however small,
// stops the writer: full is told once, every waiting sender and every
// later one gets ErrNotReading, and nothing more is written.
func TestWriter_byteBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := &stuck{release: make(chan struct{})}
		var full []error
		w := NewWriter(s, 0, func(err error) { full = append(full, err) })
		go w.Run()
		big := make([]byte, MaxQueuedBytes/2)
		first := w.Enqueue(big)
		synctest.Wait() // the writer is stuck writing it
		second := w.Enqueue(big)
		w.Post([]byte("an ack"))
		third := w.Enqueue([]byte("a request"))
		testutil.Equal(t, "full told", len(full), 1)
		testutil.ErrorIs(t, full[0], ErrNotReading)
		var we *WriteError
		if err := <-third; !errors.As(err, &we) || !errors.Is(err, ErrNotReading) {
			t.Errorf("a message past the bound: %v, want a *WriteError wrapping ErrNotReading", err)
		}
		close(s.release)
		testutil.Success(t, <-first)
		testutil.ErrorIs(t, <-second, ErrNotReading)
		<-w.Done()
		testutil.Equal(t, "bytes written", s.written.Load(), int64(len(big)))
		testutil.Equal(t, "full told", len(full), 1)
	})
}
