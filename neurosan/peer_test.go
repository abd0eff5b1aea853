package neurosan_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gamelink-go/gamelink/internal/memnet"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
)

// dialRecorder is a transport that records every address dialled and
// connects only those on this machine, to h served in memory: a test of
// it never reaches another address.
type dialRecorder struct {
	mu    sync.Mutex
	dials []string
}

func (d *dialRecorder) client(t *testing.T, h http.Handler) *http.Client {
	t.Helper()
	l := memnet.NewListener("127.0.0.1:8080")
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d.mu.Lock()
			d.dials = append(d.dials, addr)
			d.mu.Unlock()
			if addr != "127.0.0.1:8080" && addr != "localhost:8080" {
				return nil, errors.New("test transport: refused")
			}
			return l.Dial(ctx, network, addr)
		}}}
}

func (d *dialRecorder) addrs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...)
}

// TestClient_redirects: a redirect is followed only where the base URL's
// rules allow (docs/neurosan-protocol.md, "Redirects"): on this machine
// for a loopback base, never with user information, and at most 10 times,
// as before. Issue #34 item 1.
func TestClient_redirects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		location string
		ok       bool
		dials    []string
	}{
		{"off this machine", "http://192.0.2.1:32145/api/v1/list", false, []string{"127.0.0.1:8080"}},
		{"user information", "http://user:pw@127.0.0.1:8080/moved", false, []string{"127.0.0.1:8080"}},
		{"another path", "/moved", true, []string{"127.0.0.1:8080", "127.0.0.1:8080"}},
		{"localhost", "http://localhost:8080/moved", true, []string{"127.0.0.1:8080", "localhost:8080"}},
		{"a loop", "/api/v1/list", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d dialRecorder
			hc := d.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/moved" {
					io.WriteString(w, `{"agents": []}`)
					return
				}
				http.Redirect(w, r, tt.location, http.StatusTemporaryRedirect)
			}))
			c, err := neurosan.New("http://127.0.0.1:8080", &neurosan.Options{HTTPClient: hc})
			testutil.Success(t, err)
			defer c.Close()
			_, err = c.List(context.Background())
			if tt.ok {
				testutil.Success(t, err)
			} else if err == nil {
				t.Fatal("followed")
			}
			if tt.dials == nil {
				testutil.Equal(t, "requests", len(d.addrs()), 10) // as net/http's default policy, before this change too
				return
			}
			testutil.Equal(t, "dials", d.addrs(), tt.dials)
		})
	}
}

// TestClient_clipsServerText: the server's text in an error (a status
// body's message, an {"error": …} after the answer, which is logged) is
// clipped and its control characters escaped. Issue #31 item 7.
func TestClient_clipsServerText(t *testing.T) {
	t.Parallel()
	hostile := strings.Repeat("x", 1<<20) + `\u001b]0;pwned\u0007`
	var d dialRecorder
	hc := d.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "`+hostile[len(hostile)-60000:]+`"}`)
			return
		}
		io.WriteString(w, `{"response": {"type": "AGENT_FRAMEWORK", "text": "ok", "chat_context": {}}}`+"\n")
		io.WriteString(w, `{"error": "`+hostile+`"}`)
	}))
	var logs testutil.Logs
	c, err := neurosan.New("http://127.0.0.1:8080", &neurosan.Options{HTTPClient: hc, Logger: logs.Logger()})
	testutil.Success(t, err)
	defer c.Close()
	check := func(what string, err error) {
		t.Helper()
		if s := err.Error(); len(s) > 8<<10 || strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("%s: %d bytes, control characters %v", what, len(s), strings.ContainsAny(s, "\x1b\x07"))
		}
	}
	_, err = c.List(context.Background())
	check("status error", err)
	_, err = neurosan.NewConversation(c, "a", nil).Send(context.Background(), "hi")
	testutil.Success(t, err)
	warns := logs.Records(slog.LevelWarn)
	testutil.Equal(t, "warnings", len(warns), 1)
	check("logged error after the answer", testutil.Attr(warns[0], "err").(error))
}
