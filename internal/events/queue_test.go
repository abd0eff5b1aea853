package events

import (
	"context"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestQueue_bounded(t *testing.T) {
	t.Parallel()
	q := New[int](2)
	testutil.Equal(t, "push 1", q.Push(1), true)
	testutil.Equal(t, "push 2", q.Push(2), true)
	testutil.Equal(t, "full", q.Full(), true)
	testutil.Equal(t, "push 3 refused", q.Push(3), false)
	v, ok, _ := q.TryNext()
	testutil.Equal(t, "oldest first", v, 1)
	testutil.Equal(t, "ok", ok, true)
	testutil.Equal(t, "room again", q.Push(3), true)
	testutil.Equal(t, "poll", q.Poll(nil), []int{2, 3})
	testutil.Equal(t, "empty", q.Len(), 0)
	_, ok, closed := q.TryNext()
	testutil.Equal(t, "nothing", ok || closed, false)
}

func TestQueue_Next(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](4)
		time.AfterFunc(time.Second, func() { q.Push("a") })
		start := time.Now()
		v, err := q.Next(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "value", v, "a")
		testutil.Equal(t, "waited", time.Since(start), time.Second)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = q.Next(ctx)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)

		q.Push("b")
		q.Close()
		testutil.Equal(t, "closed refuses", q.Push("c"), false)
		v, err = q.Next(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "drained after close", v, "b")
		_, err = q.Next(context.Background())
		testutil.ErrorIs(t, err, net.ErrClosed)
	})
}
