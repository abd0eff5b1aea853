// Package fakehost is the httptest-shaped serving that the module's fakes
// (neurotest, xtytest, neurosantest) share: an http.Server on an
// in-memory [memnet.Listener], reached through [Host.Client], and on a
// loopback port too when the fake's Options.Addr asks for one.
//
// A fake keeps its own lock and its started and closed state; the Host
// holds only what serves, and counts its goroutines in the fake's
// sync.WaitGroup, so that the fake's Close waits for them with the rest.
package fakehost

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/gamelink-go/gamelink/internal/memnet"
)

// Host serves one fake's handler.
type Host struct {
	// Pipe is the in-memory listener. It refuses connections, as a port
	// nobody listens on does, until the fake lets it accept with
	// Pipe.Refuse(false).
	Pipe *memnet.Listener
	// Server serves Pipe, and the loopback listener of Start.
	Server *http.Server

	pkg       string // prefixes the panics: "neurotest"
	memoryURL string
	scheme    string // memoryURL's: the URL of a loopback listener has it too
	wg        *sync.WaitGroup
}

// New returns a host, not serving yet, for the fake of package pkg: its
// in-memory address is the host and port of memoryURL
// ("ws://127.0.0.1:8000"), h serves every request, and its goroutines
// count in wg.
func New(pkg, memoryURL string, h http.Handler, wg *sync.WaitGroup) *Host {
	u, err := url.Parse(memoryURL)
	if err != nil {
		panic(pkg + ": " + err.Error())
	}
	p := memnet.NewListener(u.Host)
	p.Refuse(true)
	return &Host{Pipe: p, Server: &http.Server{Handler: h}, pkg: pkg, memoryURL: memoryURL, scheme: u.Scheme, wg: wg}
}

// Start serves Pipe and, when addr is not empty, a loopback listener on
// addr ("host:port"; port 0 picks a free one). It returns the URL to
// dial: the loopback listener's, with memoryURL's scheme, or memoryURL
// when addr is empty. Pipe still refuses connections. Start panics, as httptest does, when addr is not
// loopback or cannot be listened on; the fake calls it once.
func (h *Host) Start(addr string) (url string) {
	url = h.memoryURL
	if addr != "" {
		l, err := listenLoopback(addr)
		if err != nil {
			panic(h.pkg + ": " + err.Error())
		}
		url = h.scheme + "://" + l.Addr().String()
		h.serve(l)
	}
	h.serve(h.Pipe)
	return url
}

// listenLoopback listens on addr, which must name a loopback host.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, errors.New("listen address must be loopback")
	}
	return net.Listen("tcp", addr)
}

// serve serves l on its own goroutine, counted in wg.
func (h *Host) serve(l net.Listener) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.Server.Serve(l)
	}()
}

// Client returns an http.Client whose connections are in-memory pipes to
// the fake, whatever the URL. It works inside a testing/synctest bubble
// when the fake was created there.
func (h *Host) Client() *http.Client { return h.Pipe.Client() }

// Close stops serving: it closes the server, which cuts every connection
// it still tracks, then the in-memory listener. It does not wait: the
// fake waits on its WaitGroup. It is idempotent.
func (h *Host) Close() {
	h.Server.Close()
	h.Pipe.Close()
}
