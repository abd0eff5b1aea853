package ws

import (
	"errors"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #16, item 1: until release, no deadline set on an accepted
// connection (none at all, as net/http's hijack sets, or a later one) may
// reach past the handshake deadline fixed at accept; after release the
// connection has none. Today every stage of the upgrade also uses the
// handshake deadline itself, so this is the one test that fails when the
// clamp is gone.
func TestAcceptedConn_deadlineClamped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const timeout = 3 * time.Second
		for _, set := range []struct {
			name string
			f    func(c *acceptedConn, d time.Time) error
		}{
			{"SetDeadline", (*acceptedConn).SetDeadline},
			{"SetReadDeadline", (*acceptedConn).SetReadDeadline},
		} {
			for _, d := range []time.Time{{}, time.Now().Add(time.Hour)} {
				a, b := net.Pipe()
				c := newAcceptedConn(a, time.Now().Add(timeout), nil)
				testutil.Success(t, set.f(c, d))
				start := time.Now()
				_, err := c.Read(make([]byte, 1))
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("%s(%v): read: %v, want a deadline error", set.name, d, err)
				}
				testutil.Equal(t, set.name+": read cut after", time.Since(start), timeout)
				c.Close()
				b.Close()
			}
		}

		// After release, no deadline: the read waits for the peer.
		a, b := net.Pipe()
		c := newAcceptedConn(a, time.Now().Add(timeout), nil)
		c.release()
		go func() {
			time.Sleep(time.Hour)
			_, _ = b.Write([]byte{1})
		}()
		_, err := c.Read(make([]byte, 1))
		testutil.Success(t, err)
		c.Close()
		b.Close()
	})
}
