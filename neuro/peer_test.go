package neuro_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/fakehost"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
)

// rawPeer is a WebSocket server, in memory, that sends one frame of its
// choosing after the client's first message, and reports what came back:
// the messages the client sent and the status it closed with. It does
// what neither Neuro nor Randy does (docs/neuro-protocol.md, "Frames"),
// hence not neurotest.
type rawPeer struct {
	host *fakehost.Host
	wg   sync.WaitGroup

	mu     sync.Mutex // guards following
	got    []string
	status websocket.StatusCode
}

// peerHost serves h in memory at 127.0.0.1:8000 until the test ends.
func peerHost(t *testing.T, wg *sync.WaitGroup, h http.HandlerFunc) *fakehost.Host {
	t.Helper()
	host := fakehost.New("peer", "ws://127.0.0.1:8000", h, wg)
	host.Start("")
	host.Pipe.Refuse(false)
	t.Cleanup(func() { host.Close(); wg.Wait() })
	return host
}

func newRawPeer(t *testing.T, typ websocket.MessageType, frame []byte) *rawPeer {
	t.Helper()
	p := &rawPeer{status: -1}
	p.host = peerHost(t, &p.wg, func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for sent := false; ; sent = true {
			_, b, err := c.Read(context.Background())
			p.mu.Lock()
			if err != nil {
				p.status = websocket.CloseStatus(err)
				p.mu.Unlock()
				return
			}
			p.got = append(p.got, string(b))
			p.mu.Unlock()
			if !sent {
				c.Write(context.Background(), typ, frame)
			}
		}
	})
	return p
}

func (p *rawPeer) seen() ([]string, websocket.StatusCode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...), p.status
}

// TestClient_refusesFramesNeuroNeverSends: an action in a binary frame,
// and one in a text frame that is not valid UTF-8 (its id), are neither
// answered nor executed; the client closes the connection with 1003 or
// 1007, logs why, and reconnects. The server and Randy send text frames of
// JSON only (docs/neuro-protocol.md, "Frames"). Issue #31 item 7.
func TestClient_refusesFramesNeuroNeverSends(t *testing.T) {
	tests := []struct {
		name   string
		typ    websocket.MessageType
		frame  string
		status websocket.StatusCode
	}{
		{"binary frame", websocket.MessageBinary, `{"command":"action","data":{"id":"1","name":"place","data":"{\"cell\":5}"}}`, websocket.StatusUnsupportedData},
		{"invalid UTF-8", websocket.MessageText, "{\"command\":\"action\",\"data\":{\"id\":\"1\xff\",\"name\":\"place\",\"data\":\"{\\\"cell\\\":5}\"}}", websocket.StatusInvalidFramePayloadData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newRawPeer(t, tt.typ, []byte(tt.frame))
				var logs testutil.Logs
				var executed atomic.Int32
				c, err := neuro.New("G", &neuro.Options{URL: "ws://127.0.0.1:8000", HTTPClient: p.host.Client(), Logger: logs.Logger(), ReconnectMin: time.Hour})
				testutil.Success(t, err)
				defer c.Close()
				testutil.Success(t, c.Register(placeAction(nil, func(*neuro.Invocation) { executed.Add(1) })))
				testutil.Success(t, c.Connect(context.Background()))
				go func() {
					for range c.Events() { // runs Execute
					}
				}()
				time.Sleep(time.Second)
				synctest.Wait()
				got, status := p.seen()
				testutil.Equal(t, "close status", status, tt.status)
				for _, m := range got {
					if strings.Contains(m, "action/result") {
						t.Errorf("answered: %s", m)
					}
				}
				testutil.Equal(t, "executed", executed.Load(), int32(0))
				warns := logs.Records(slog.LevelWarn)
				var pe *neuro.ProtocolError
				if len(warns) == 0 || !errors.As(testutil.Attr(warns[0], "err").(error), &pe) {
					t.Fatalf("logged %v; want a *ProtocolError", warns)
				}
			})
		})
	}
}

// TestClient_clipsWhatItSendsBack: her text that the client quotes back to
// her (an unknown action's name, a property name in off-schema data) is
// clipped, so a hostile 3 MiB name is not echoed whole. Issue #31 item 7.
func TestClient_clipsWhatItSendsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		closed := neuro.Object(map[string]neuro.Schema{"cell": neuro.Integer()}, "cell").JSON()
		var schema map[string]any
		testutil.Success(t, json.Unmarshal(closed, &schema))
		schema["additionalProperties"] = false
		strict, _ := json.Marshal(schema)
		testutil.Success(t, e.c.Register(neuro.Action{Name: "place", Description: "Place.", Schema: strict}))
		e.start()
		e.wait("registered", func() bool { return len(e.srv.Actions()) == 1 })
		huge := strings.Repeat("x", 3<<20)
		e.srv.SendAction(huge, "")
		e.wait("first result", func() bool { return len(e.srv.Results()) == 1 })
		e.srv.SendAction("place", `{"cell":1,"`+huge+`":2}`)
		e.wait("second result", func() bool { return len(e.srv.Results()) == 2 })
		for i, r := range e.srv.Results() {
			if r.Success || len(r.Message) > 8<<10 {
				t.Errorf("result %d: success %v, %d bytes: %.200s", i, r.Success, len(r.Message), r.Message)
			}
		}
	})
}

// TestClient_followsNoRedirect: a local process answering the upgrade with
// a redirect, off this machine or not, is not followed: the Neuro server
// never redirects the handshake (docs/neuro-protocol.md, "The
// handshake"). The transport records every dial and refuses all but the
// peer's, so the test never reaches another address. Issue #34 item 1.
func TestClient_followsNoRedirect(t *testing.T) {
	for _, loc := range []string{"http://192.0.2.1:32145/", "http://127.0.0.1:8000/elsewhere"} {
		t.Run(loc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var wg sync.WaitGroup
				var mu sync.Mutex
				var dials, paths []string
				host := peerHost(t, &wg, func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					paths = append(paths, r.URL.Path)
					mu.Unlock()
					if r.URL.Path != "/" {
						http.NotFound(w, r) // no loop: coder/websocket alone would follow one without end
						return
					}
					http.Redirect(w, r, loc, http.StatusTemporaryRedirect)
				})
				hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
					DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
						mu.Lock()
						dials = append(dials, addr)
						mu.Unlock()
						if addr != "127.0.0.1:8000" {
							return nil, errors.New("test transport: refused")
						}
						return host.Pipe.Dial(ctx, network, addr)
					}}}
				c, err := neuro.New("G", &neuro.Options{URL: "ws://127.0.0.1:8000", HTTPClient: hc})
				testutil.Success(t, err)
				defer c.Close()
				err = c.Connect(context.Background())
				var de *neuro.DialError
				testutil.ErrorAs(t, err, &de)
				if !strings.Contains(err.Error(), "redirected") {
					t.Errorf("err = %v; want it to say the handshake was redirected", err)
				}
				mu.Lock()
				defer mu.Unlock()
				testutil.Equal(t, "dials", dials, []string{"127.0.0.1:8000"})
				testutil.Equal(t, "requests", paths, []string{"/"})
			})
		})
	}
}

// floodConn is a server that sends the actions of in and discards what
// the client writes, counting its results: it keeps nothing itself.
type floodConn struct {
	in      chan []byte
	closed  chan struct{}
	once    sync.Once
	results atomic.Int32
}

func (f *floodConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-f.in:
		return b, nil
	case <-f.closed:
		return nil, neuro.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *floodConn) Write(_ context.Context, b []byte) error {
	if strings.Contains(string(b), `"action/result"`) {
		f.results.Add(1)
	}
	return nil
}

func (f *floodConn) Close() error { f.once.Do(func() { close(f.closed) }); return nil }

// TestClient_answeredIDsBoundedInBytes: the ids the client remembers (the
// last 1024 answered, so that none is answered twice) take memory
// bounded in bytes whatever their length: 1100 actions with 32 KiB ids
// leave under 4 MiB behind (1024 of them kept whole were 32 MiB). Not
// parallel: it measures the process's heap. Issue #31.
func TestClient_answeredIDsBoundedInBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &floodConn{in: make(chan []byte), closed: make(chan struct{})}
		c, err := neuro.New("G", &neuro.Options{URL: "ws://127.0.0.1:8000"})
		testutil.Success(t, err)
		neuro.SetDial(c, func(context.Context, string, func(context.Context, string) (neuro.Conn, error)) (neuro.Conn, error) {
			return f, nil
		})
		defer c.Close()
		testutil.Success(t, c.Register(neuro.Action{Name: "pass", Description: "Pass."}))
		testutil.Success(t, c.Connect(context.Background()))
		heap := func() uint64 {
			synctest.Wait()
			c.Poll(nil)
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		before := heap()
		const n = 1100
		pad := strings.Repeat("i", 32<<10)
		for i := range n {
			f.in <- []byte(`{"command":"action","data":{"id":"` + strconv.Itoa(i) + pad + `","name":"pass"}}`)
			if i%64 == 0 {
				synctest.Wait()
				c.Poll(nil)
			}
		}
		grown := int64(heap()) - int64(before)
		testutil.Equal(t, "results", f.results.Load(), int32(n))
		if grown > 4<<20 {
			t.Errorf("the heap grew by %d bytes after %d actions with 32 KiB ids", grown, n)
		}
	})
}
