package inspect

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
)

// Serve serves in's page on addr, a loopback address: "127.0.0.1:PORT",
// "localhost:PORT" or "[::1]:PORT", where port 0 picks a free one. It
// listens before it returns, serves on a goroutine of its own, and
// returns the page's URL, token included, for the game to print for its
// developer. Any other address is refused, since the page shows the
// player's words and voice.
//
// stop closes in (ending the pages' event streams), then the listener,
// and returns once every request and the serving goroutine have ended
// (at most 5 s for a request that does not end by itself). It is
// idempotent. A game that mounts the page on a debug listener of its own
// uses [Inspector.ServeHTTP] instead.
func Serve(in *Inspector, addr string) (url string, stop func(), err error) {
	defer errd.Wrap(&err, "inspect: serve")
	l, err := listenLoopback(addr)
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: in, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)} // a debug page's broken connections are nobody's news
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(l)
	}()
	stop = sync.OnceFunc(func() {
		_ = in.Close() // an open page's event stream keeps its request alive until then
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			_ = hs.Close()
		}
		<-done
	})
	return in.URL(l.Addr().String()), stop, nil
}

// listenLoopback listens on addr, which must name a loopback address.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q is not a loopback address (want 127.0.0.1:PORT, localhost:PORT or [::1]:PORT; "+
			"port 0 picks a free one): the page shows the player's words and voice", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if a, ok := l.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() { // localhost, resolved
		l.Close()
		return nil, fmt.Errorf("%q listens on %s, not a loopback address", addr, l.Addr())
	}
	return l, nil
}
