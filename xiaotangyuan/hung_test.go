package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
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

// rawHarness serves in-memory connections with serve, which gets each
// accepted WebSocket and its first message, the hello, read but not
// answered. It returns the HTTP client to dial it with; the server stops
// when the test ends.
func rawHarness(t *testing.T, serve func(ctx context.Context, ws *websocket.Conn, hello []byte)) *http.Client {
	l := &oneConn{ch: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		_, b, err := ws.Read(r.Context())
		if err != nil || !strings.Contains(string(b), "adapter.hello") {
			t.Errorf("want hello, got %s, %v", b, err)
			return
		}
		serve(r.Context(), ws, b)
	})}
	go srv.Serve(l)
	t.Cleanup(func() {
		close(l.done)
		srv.Close()
	})
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		a, b := net.Pipe()
		l.ch <- a
		return b, nil
	}}}
}

// acceptHello answers the hello read by rawHarness.
func acceptHello(ctx context.Context, t *testing.T, ws *websocket.Conn, hello []byte) {
	var h struct{ ID json.RawMessage }
	if err := json.Unmarshal(hello, &h); err != nil {
		t.Errorf("hello %s: %v", hello, err)
	}
	ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(h.ID)+`,"result":{"accepted":true,"protocolVersion":"1.1"}}`))
}

// hungHarness serves connections that read the hello, answer it when
// answer (nil: always) says so, and then hang (their event loop stuck,
// reading nothing, so pings go unanswered). It returns the HTTP client to
// dial it with; the server stops when the test ends.
func hungHarness(t *testing.T, answer func(hello []byte) bool) *http.Client {
	hang := make(chan struct{})
	hc := rawHarness(t, func(ctx context.Context, ws *websocket.Conn, hello []byte) {
		if answer == nil || answer(hello) {
			acceptHello(ctx, t, ws, hello)
		}
		<-hang
	})
	t.Cleanup(func() { close(hang) }) // before rawHarness's own cleanup
	return hc
}

// A Harness that answers the hello and then hangs no longer answers
// pings: the client drops the connection after PingInterval +
// PingTimeout, not at the next call.
func TestClient_PingUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.HTTPClient = hungHarness(t, nil)
		opts.PingInterval = 3 * time.Second
		opts.PingTimeout = time.Second
		opts.ReconnectMin = time.Hour // no redial within the test
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		testutil.Success(t, c.Connect(context.Background()))
		start := time.Now()
		e := &env{t: t, c: c}
		testutil.Equal(t, "connected", e.next().Kind, xty.EventConnected)
		ev := e.next() // fails in fake time, rather than pinging forever, if no ping is sent
		testutil.Equal(t, "disconnected", ev.Kind, xty.EventDisconnected)
		testutil.Equal(t, "after", time.Since(start), 4*time.Second)
		var de *xty.DisconnectError
		testutil.ErrorAs(t, ev.Err, &de)
		testutil.Equal(t, "reason", de.Reason, "ping unanswered")
	})
}

// A Harness that never answers the hello fails Connect after the default
// HandshakeTimeout of 5 s with ErrTimeout, or when Connect's ctx expires
// first; no close handshake with the silent peer adds to either.
func TestClient_HandshakeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.HTTPClient = hungHarness(t, func([]byte) bool { return false })
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		start := time.Now()
		err = c.Connect(context.Background())
		testutil.ErrorIs(t, err, xty.ErrTimeout)
		testutil.Equal(t, "after", time.Since(start), 5*time.Second)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		testutil.ErrorIs(t, c.Connect(ctx), context.DeadlineExceeded)
		testutil.Equal(t, "ctx bounds Connect", time.Since(start), time.Second)
	})
}

// A save switched while a hello is in flight (so that SetSaveID finds no
// connection to switch) is not lost: the connection made with the old
// save is replaced at once by one whose hello carries the new save.
func TestClient_SetSaveIDDuringHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hellos := make(chan []byte, 2)
		release := make(chan struct{})
		opts := baseOptions()
		opts.PingInterval = -1
		opts.HTTPClient = hungHarness(t, func(b []byte) bool {
			hellos <- b
			<-release
			return true
		})
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		errc := make(chan error, 1)
		go func() { errc <- c.Connect(context.Background()) }()
		testutil.Equal(t, "first hello without save", strings.Contains(string(<-hellos), "saveId"), false)
		id := xty.SaveID("testgame", "slot-9")
		testutil.Success(t, c.SetSaveID(context.Background(), id)) // not connected yet: stored
		close(release)
		testutil.Success(t, <-errc)
		testutil.Equal(t, "second hello carries the save", strings.Contains(string(<-hellos), `"saveId":"`+id+`"`), true)
	})
}

// A Harness that accepts the connection but never answers the WebSocket
// upgrade (its event loop hung) fails Connect after HandshakeTimeout, and
// Close does not wait for such a Connect.
func TestClient_UpgradeUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var silent []net.Conn // server ends nobody reads
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range silent {
				c.Close()
			}
		}()
		opts := baseOptions()
		opts.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			a, b := net.Pipe()
			mu.Lock()
			silent = append(silent, a)
			mu.Unlock()
			return b, nil
		}}}
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		start := time.Now()
		testutil.ErrorIs(t, c.Connect(context.Background()), xty.ErrDisconnected)
		testutil.Equal(t, "after", time.Since(start), 5*time.Second)

		errc := make(chan error, 1)
		go func() { errc <- c.Connect(context.Background()) }()
		time.Sleep(time.Second)
		testutil.Success(t, c.Close())
		testutil.ErrorIs(t, <-errc, xty.ErrDisconnected)
		testutil.Equal(t, "Close cut Connect short", time.Since(start), 6*time.Second)
	})
}

// Close does not wait more than 5 s for a hung Harness's close frame.
func TestClient_CloseHungHarness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.HTTPClient = hungHarness(t, nil)
		opts.PingInterval = -1
		c, err := xty.New(opts)
		testutil.Success(t, err)
		testutil.Success(t, c.Connect(context.Background()))
		start := time.Now()
		testutil.Success(t, c.Close())
		testutil.Equal(t, "closed after", time.Since(start), 5*time.Second)
	})
}
