package neurotest

import (
	"context"
	"net"
	"sync"
)

// pipeEnd is one end of an in-memory message pipe. Both ends share done.
type pipeEnd struct {
	in   <-chan []byte
	out  chan<- []byte
	done chan struct{}
	once *sync.Once
}

func newPipe(buf int) (a, b *pipeEnd) {
	ab, ba := make(chan []byte, buf), make(chan []byte, buf)
	done, once := make(chan struct{}), &sync.Once{}
	return &pipeEnd{in: ba, out: ab, done: done, once: once},
		&pipeEnd{in: ab, out: ba, done: done, once: once}
}

// Read returns the next message. Messages written before Close are still
// delivered, as a WebSocket close handshake would: otherwise a close would
// race the buffered messages and lose some at random.
func (p *pipeEnd) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-p.in:
		return b, nil
	case <-p.done:
		select {
		case b := <-p.in:
			return b, nil
		default:
			return nil, net.ErrClosed
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeEnd) Write(ctx context.Context, msg []byte) error {
	b := append([]byte(nil), msg...)
	select {
	case <-p.done:
		return net.ErrClosed
	default:
	}
	select {
	case p.out <- b:
		return nil
	case <-p.done:
		return net.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeEnd) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
