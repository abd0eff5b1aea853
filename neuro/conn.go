package neuro

import (
	"context"
	"os"

	"github.com/coder/websocket"
)

// DefaultURL is used when neither [ClientOptions.URL] nor the
// NEURO_SDK_WS_URL environment variable is set.
const DefaultURL = "ws://localhost:8000"

// URLFromEnv returns $NEURO_SDK_WS_URL, or [DefaultURL] when it is unset.
func URLFromEnv() string {
	if u := os.Getenv("NEURO_SDK_WS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Conn is one message-oriented connection to a Neuro server: text frames
// of JSON. [ClientOptions.Dial] returns one; the default dials a WebSocket.
// The client calls Read from one goroutine and Write from another, and
// Close once, possibly concurrently with both; Read and Write must return
// when ctx ends.
type Conn interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, msg []byte) error
	Close() error
}

type wsConn struct{ c *websocket.Conn }

// dialWebSocket dials url with coder/websocket and sets the read limit.
func dialWebSocket(ctx context.Context, url string, readLimit int64) (Conn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(readLimit)
	return &wsConn{c: c}, nil
}

func (w *wsConn) Read(ctx context.Context) ([]byte, error) {
	// Binary frames are read too: the API wants text, but a reference
	// peer (Randy) accepts both, and the bytes are JSON either way.
	_, b, err := w.c.Read(ctx)
	return b, err
}

func (w *wsConn) Write(ctx context.Context, msg []byte) error {
	return w.c.Write(ctx, websocket.MessageText, msg)
}

func (w *wsConn) Close() error {
	return w.c.Close(websocket.StatusNormalClosure, "")
}
