package fakehost

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func hello(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.URL.Path) }

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	testutil.Success(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testutil.Success(t, err)
	return string(b)
}

// The host refuses until the fake lets the pipe accept, serves in memory
// at memoryURL's address, and Close ends every goroutine it started.
func TestHost_memory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		h := New("faketest", "ws://127.0.0.1:8000", http.HandlerFunc(hello), &wg)
		testutil.Equal(t, "pipe address", h.Pipe.Addr().String(), "127.0.0.1:8000")
		_, err := h.Client().Get("http://127.0.0.1:8000/x")
		testutil.Error(t, err) // not started
		testutil.Equal(t, "memory URL", h.Start(""), "ws://127.0.0.1:8000")
		h.Pipe.Refuse(false)
		testutil.Equal(t, "body", get(t, h.Client(), "http://127.0.0.1:8000/x"), "hello /x")
		h.Close()
		h.Close() // idempotent
		wg.Wait()
		_, err = h.Pipe.Dial(context.Background(), "tcp", "")
		testutil.Error(t, err)
	})
}

// Start with an address serves a loopback port too, with memoryURL's
// scheme; a host that is not loopback panics with the package's name.
func TestHost_addr(t *testing.T) {
	var wg sync.WaitGroup
	h := New("faketest", "http://127.0.0.1:8080", http.HandlerFunc(hello), &wg)
	func() {
		defer func() {
			r := recover()
			msg, _ := r.(string)
			testutil.Equal(t, "panic", msg, "faketest: listen address must be loopback")
		}()
		h.Start("0.0.0.0:0")
	}()
	h = New("faketest", "http://127.0.0.1:8080", http.HandlerFunc(hello), &wg)
	url := h.Start("127.0.0.1:0")
	defer func() { h.Close(); wg.Wait() }()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || url == "http://127.0.0.1:0" {
		t.Fatalf("url %q, want http://127.0.0.1:<port>", url)
	}
	testutil.Equal(t, "body", get(t, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, url+"/y"), "hello /y")
}
