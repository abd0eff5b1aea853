package ws

import (
	"testing"
	"testing/synctest"
	"time"
)

// Issue #31, item 2: who gives way when every slot is taken. A
// connection that has sent something and is not being closed never does;
// one being closed does at once; one that has sent nothing since the
// server began to read it does first, once silent for a tenth of the
// handshake timeout, and until then the listener waits for that.
func TestListener_giveWayOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newListener(nil, 3*time.Second)
		conn := func(read, spoke, closing bool) *acceptedConn {
			c := &acceptedConn{l: l}
			if read {
				c.waiting.Store(time.Now().UnixNano())
			}
			c.spoke.Store(spoke)
			c.closing.Store(closing)
			return c
		}
		talking, unread := conn(true, true, false), conn(false, false, false)
		closing, silent := conn(true, true, true), conn(true, false, false)
		check := func(name string, conns []*acceptedConn, want *acceptedConn, wait time.Duration) {
			t.Helper()
			l.conns = conns
			got, w := l.giveWayLocked(time.Now())
			if got != want || w != wait {
				t.Errorf("%s: gives way %p after %v, want %p after %v", name, got, w, want, wait)
			}
		}
		check("talking and unread", []*acceptedConn{talking, unread}, nil, 0)
		check("a young silent one", []*acceptedConn{talking, silent}, nil, 300*time.Millisecond)
		check("closing before a young silent one", []*acceptedConn{talking, closing, silent}, closing, 0)
		time.Sleep(300 * time.Millisecond)
		check("an aged silent one before closing", []*acceptedConn{talking, closing, silent}, silent, 0)
		check("talking and unread, later", []*acceptedConn{talking, unread}, nil, 0)
	})
}
