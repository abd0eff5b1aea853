package memnet

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestListener_http(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewListener("127.0.0.1:8000")
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello "+r.URL.Path)
		})}
		done := make(chan struct{})
		go func() { defer close(done); srv.Serve(l) }()
		resp, err := l.Client().Get("http://127.0.0.1:8000/x")
		testutil.Success(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		testutil.Equal(t, "body", string(b), "hello /x")
		testutil.Equal(t, "addr", l.Addr().String(), "127.0.0.1:8000")
		srv.Close()
		<-done
		_, err = l.Dial(context.Background(), "tcp", "")
		testutil.ErrorIs(t, err, net.ErrClosed)
	})
}

// A listener on an IP and a port looks like loopback TCP, as a server
// that checks its listener, or the Host of a request, expects.
func TestListener_tcpAddrs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewListener("127.0.0.1:38471")
		defer l.Close()
		want := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 38471}
		testutil.Equal(t, "listener", l.Addr(), net.Addr(want))
		accepted := make(chan net.Conn, 2)
		go func() {
			for range 2 {
				c, err := l.Accept()
				testutil.Success(t, err)
				accepted <- c
			}
		}()
		for i := range 2 {
			cli, err := l.Dial(context.Background(), "tcp", "")
			testutil.Success(t, err)
			srv := <-accepted
			testutil.Equal(t, "server's local", srv.LocalAddr(), net.Addr(want))
			testutil.Equal(t, "client's remote", cli.RemoteAddr(), net.Addr(want))
			testutil.Equal(t, "peer", srv.RemoteAddr().String(), cli.LocalAddr().String())
			testutil.Equal(t, "ephemeral port", cli.LocalAddr().(*net.TCPAddr).Port, 49152+i)
			cli.Close()
			srv.Close()
		}
	})
	l := NewListener("pipe:1")
	testutil.Equal(t, "other addresses as given", l.Addr().String(), "pipe:1")
	testutil.Equal(t, "network", l.Addr().Network(), "pipe")
}
