// Package wsread reads WebSocket messages into one buffer kept between
// messages, for the game server's reader and the fake engine's.
//
// coder/websocket's Read reads each message into a new buffer that it
// grows from 512 bytes: 15 allocations and as many copies for a 44 KB
// audio chunk (issue #24). A Buffer grows once and is reused.
package wsread

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/coder/websocket"
)

// Buffer reads messages into one buffer. It starts at Min bytes, grows
// as a message needs, and is dropped before the next read when it has
// grown past MaxKept, so that one rare large message does not hold
// megabytes for the life of a connection. The zero value is not usable:
// set Min and MaxKept.
type Buffer struct {
	Min, MaxKept int
	b            []byte
}

// Next reads the next message of c. The bytes returned are valid until
// the next call. The connection's read limit bounds the message; a read
// does not end on a context (the caller closes the connection to end it).
func (r *Buffer) Next(c *websocket.Conn) (websocket.MessageType, []byte, error) {
	if cap(r.b) > r.MaxKept {
		r.b = nil
	}
	typ, rd, err := c.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	buf := r.b[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(r.Min, cap(buf)))
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			r.b = buf
			return typ, buf, nil
		}
		if err != nil {
			r.b = buf
			return typ, buf, err
		}
	}
}
