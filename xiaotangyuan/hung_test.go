package xiaotangyuan_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// oneConn is a listener that yields a single in-memory connection.
type oneConn struct {
	ch   chan net.Conn
	done chan struct{}
}

func (l *oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return &net.TCPAddr{} }

// A Harness that answers the hello and then hangs (its event loop stuck,
// reading nothing) no longer answers pings: the client drops the
// connection after PingInterval + PingTimeout, not at the next call.
func TestClient_PingUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := make(chan struct{})
		l := &oneConn{ch: make(chan net.Conn), done: make(chan struct{})}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer ws.CloseNow()
			_, b, err := ws.Read(r.Context())
			if err != nil || !strings.Contains(string(b), "adapter.hello") {
				t.Errorf("want hello, got %s, %v", b, err)
				return
			}
			ws.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"result":{"accepted":true,"protocolVersion":"1.1"}}`))
			<-hang
		})}
		go srv.Serve(l)
		defer func() {
			close(hang)
			close(l.done)
			srv.Close()
		}()
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			a, b := net.Pipe()
			l.ch <- a
			return b, nil
		}}}
		opts := baseOptions()
		opts.HTTPClient = hc
		opts.PingInterval = 3 * time.Second
		opts.PingTimeout = time.Second
		opts.ReconnectMin = time.Hour // no redial within the test
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		testutil.Success(t, c.Connect(context.Background()))
		start := time.Now()
		testutil.Equal(t, "connected", (<-c.Events()).Kind, xty.EventConnected)
		ev := <-c.Events()
		testutil.Equal(t, "disconnected", ev.Kind, xty.EventDisconnected)
		testutil.Equal(t, "after", time.Since(start), 4*time.Second)
		var de *xty.DisconnectError
		testutil.ErrorAs(t, ev.Err, &de)
		testutil.Equal(t, "reason", de.Reason, "ping unanswered")
	})
}
