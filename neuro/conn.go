package neuro

import (
	"context"
	"net/http"
	"os"
	"unicode/utf8"

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

// Read returns the next message. A binary frame, or a text frame that is
// not valid UTF-8, is refused with a *ProtocolError, and the connection
// closed with 1003 or 1007 (RFC 6455 §7.4.1, §8.1): the server and Randy
// send only text frames of JSON (docs/neuro-protocol.md, "Frames"), so
// such a frame is no message of theirs (issue #31).
func (w *wsConn) Read(ctx context.Context) ([]byte, error) {
	typ, b, err := w.c.Read(ctx)
	switch {
	case err != nil:
		return nil, err
	case typ != websocket.MessageText:
		return nil, w.refuse(websocket.StatusUnsupportedData, "binary frames are not accepted")
	case !utf8.Valid(b):
		return nil, w.refuse(websocket.StatusInvalidFramePayloadData, "text frames must be valid UTF-8")
	}
	return b, nil
}

// refuse closes the connection with code, before the client cancels a
// write in flight (which would cut it without a status), and returns why.
func (w *wsConn) refuse(code websocket.StatusCode, reason string) error {
	w.c.Close(code, reason)
	return &ProtocolError{Reason: reason + "; connection closed"}
}

func (w *wsConn) Write(ctx context.Context, msg []byte) error {
	return w.c.Write(ctx, websocket.MessageText, msg)
}

func (w *wsConn) Close() error {
	return w.c.Close(websocket.StatusNormalClosure, "")
}
