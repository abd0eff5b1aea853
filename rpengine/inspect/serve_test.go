package inspect_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// A game with no debug listener of its own serves the page on a loopback
// port, prints the URL, and stops it when it exits.
func ExampleServe() {
	in := inspect.New(nil) // hand it to rpengine.ServerOptions as Recorder, Logger and OnSession
	page, stop, err := inspect.Serve(in, "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	// log.Print("inspector: ", page)
	res, err := http.Get(page)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println(res.Status)
	// Output: 200 OK
}

// Issue #36: Serve listens on the loopback address it is given, the URL
// it returns opens the page (and without the token it is refused), and
// stop ends an open page's event stream, the listener and every
// goroutine (TestMain checks for leaks).
func TestServe(t *testing.T) {
	addrs := []string{"127.0.0.1:0", "localhost:0"}
	if l, err := net.Listen("tcp", "[::1]:0"); err == nil {
		l.Close()
		addrs = append(addrs, "[::1]:0")
	} else {
		t.Logf("no IPv6 loopback here, [::1] untested: %v", err)
	}
	for _, addr := range addrs {
		t.Run(addr, func(t *testing.T) {
			page, stop, err := inspect.Serve(inspect.New(nil), addr)
			testutil.Success(t, err)
			defer stop()
			u, err := url.Parse(page)
			testutil.Success(t, err)
			if u.Scheme != "http" || u.Query().Get("token") == "" || u.Port() == "0" || u.Path != "/" {
				t.Fatalf("URL %q: want http://ADDR:PORT/?token=...", page)
			}
			if host := u.Hostname(); !net.ParseIP(host).IsLoopback() {
				t.Fatalf("URL %q: host %s is not a loopback address", page, host)
			}
			testutil.Equal(t, "page", status(t, page), http.StatusOK)
			testutil.Equal(t, "no token", status(t, "http://"+u.Host+"/"), http.StatusForbidden)

			u.Path = "/events"
			res, err := http.Get(u.String())
			testutil.Success(t, err)
			defer res.Body.Close()
			br := bufio.NewReader(res.Body)
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
				t.Fatalf("event stream starts %q, %v", line, err)
			}
			stop()
			if _, err := io.ReadAll(br); err != nil {
				t.Logf("the event stream ended with %v", err)
			}
			stop() // idempotent
			if _, err := http.Get(page); err == nil {
				t.Error("the page is still served after stop")
			}
		})
	}
}

// Issue #36: an address that is not loopback is refused before anything
// listens, with an error that says why.
func TestServe_refused(t *testing.T) {
	for _, tc := range []struct{ addr, says string }{
		{"0.0.0.0:0", "not a loopback address"},
		{":0", "not a loopback address"},
		{"[::]:0", "not a loopback address"},
		{"192.0.2.1:6060", "not a loopback address"},
		{"example.com:6060", "not a loopback address"},
		{"127.0.0.1", "missing port"},
		{"127.0.0.1:http-alt-no-such", "unknown port"},
	} {
		_, stop, err := inspect.Serve(inspect.New(nil), tc.addr)
		if err == nil {
			stop()
			t.Errorf("%q: served", tc.addr)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "inspect: serve: ") || !strings.Contains(msg, tc.says) {
			t.Errorf("%q: error %q, want \"inspect: serve: ...%s...\"", tc.addr, msg, tc.says)
		}
	}
}

func status(t *testing.T, u string) int {
	t.Helper()
	res, err := http.Get(u)
	testutil.Success(t, err)
	res.Body.Close()
	return res.StatusCode
}
