package neuro

import (
	"context"
	"net/http"
	"os"

	"github.com/coder/websocket"
)

// DefaultURL is used when neither [Options.URL] nor the
// NEURO_SDK_WS_URL environment variable is set.
const DefaultURL = "ws://localhost:8000"

// URLFromEnv returns $NEURO_SDK_WS_URL, or [DefaultURL] when it is unset.
func URLFromEnv() string {
	if u := os.Getenv("NEURO_SDK_WS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// conn is one message-oriented connection to a Neuro server: text frames
// of JSON. The client calls Read from one goroutine and Write from
// another, and Close once, possibly concurrently with both; Read and
// Write return when ctx ends. The only implementation is a WebSocket;
// the interface is the seam export_test.go gives tests that need a peer
// no real server would be (one that stops reading).
type conn interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, msg []byte) error
	Close() error
}

type wsConn struct{ c *websocket.Conn }

// dialWebSocket dials url with coder/websocket over client and sets the
// read limit (negative for none).
func dialWebSocket(ctx context.Context, url string, client *http.Client, readLimit int64) (conn, error) {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
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
