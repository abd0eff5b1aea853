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
