package rpengine_test

// Issue #16: upgrade and plain requests that declare a body and never send
// it, over real loopback sockets as the attack was run.

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// openRaw writes req on a new connection to f and leaves it open until
// the test ends.
func openRaw(t *testing.T, f *fixture, req string) net.Conn {
	t.Helper()
	c, err := f.dialConn(ctxT(t))
	testutil.Success(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Write([]byte(req))
	testutil.Success(t, err)
	return c
}

// Issue #16: four upgrade requests with the allowed Origin that declare a
// body (Content-Length: 1 or Transfer-Encoding: chunked) and never send it
// held every handshake slot with no deadline: a normal engine got 503 for
// as long as they stayed open. They are now refused with 400 before the
// upgrade, at once (the handshake deadline here is long, so the refusal
// cannot come from it), and the engine connects.
func TestServer_upgradeWithBodyLockout(t *testing.T) {
	t.Parallel()
	f := newTCPServer(t, &rpengine.ServerOptions{HandshakeTimeout: 30 * time.Second})
	host := "127.0.0.1:" + strconv.Itoa(f.port)
	origin := "Origin: " + rpengine.OriginProduction
	var conns []net.Conn
	for _, body := range []string{"Content-Length: 1", "Transfer-Encoding: chunked", "Content-Length: 1", "Transfer-Encoding: chunked"} {
		conns = append(conns, openRaw(t, f, upgradeReq(rpengine.SocketPath, host, origin, body)))
	}
	// Each is answered at once (on the old code none was ever answered).
	statuses := make([]int, len(conns))
	for i, c := range conns {
		testutil.Success(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			statuses[i] = resp.StatusCode
		}
	}
	// A normal engine connects (on the old code: 503, locked out).
	eng, err := enginetest.Dial(ctxT(t), f.url, f.engineOpts(nil))
	if err != nil {
		t.Fatalf("a normal engine was locked out: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	for i, st := range statuses {
		testutil.Equal(t, "status of upgrade "+strconv.Itoa(i), st, http.StatusBadRequest)
	}
	f.log.waitFor(t, "declares a body")
}
