package rpengine_test

// A real browser against the server (issue #9): headless Chromium, driven
// over the DevTools protocol, loads a page whose script opens a WebSocket
// to the game server, completes hello/welcome, receives a reply.request
// and streams a reply back. The page's origin is exactly what a browser
// sends, so this checks the origin rules end to end.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// browserPage plays a minimal RPEngine: it connects to the socket URL in
// its fragment (#ws=...), says hello, acks, and answers a reply.request
// with three text deltas, reply.text.completed and reply.completed. Its
// progress is in window.__log, its outcome in window.__done.
const browserPage = `<!doctype html><meta charset="utf-8"><title>rpengine browser test</title><script>
const log = []; window.__log = log;
let n = 0, session = null;
const id = () => "b" + (++n) + "-" + Math.random().toString(36).slice(2);
function env(type, fields) {
  const m = {protocol: "gemtavern.rp_engine", protocolVersion: 3, type, messageId: id(), timestamp: new Date().toISOString(), ...fields};
  if (session) m.sessionId = session;
  return m;
}
const send = (type, fields) => ws.send(JSON.stringify(env(type, fields)));
const ws = new WebSocket(decodeURIComponent(location.hash.slice(4)));
ws.onopen = () => { log.push("open"); send("hello", {clientVersion: "chromium-test"}); };
ws.onerror = () => log.push("error");
ws.onclose = (e) => { log.push("close " + e.code); window.__done = window.__done || "closed " + e.code; };
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.type === "ack") return;
  send("ack", {acknowledgedMessageId: m.messageId});
  if (m.type === "welcome") {
    session = m.sessionId; log.push("welcome");
    send("capacity.update", {queueDepth: 0, queueLimit: 20, acceptingRequests: true});
  } else if (m.type === "reply.request") {
    log.push("request " + m.event.text);
    const r = m.requestId, words = ["Hello", " from", " Chromium."];
    send("reply.accepted", {requestId: r, eventId: m.eventId, resolvedCardHash: m.card.targetHash || "0".repeat(64), queueDepth: 1});
    words.forEach((w, i) => send("reply.text.delta", {requestId: r, sequence: i, delta: w}));
    send("reply.text.completed", {requestId: r, text: words.join(""), tokenCount: 3, elapsedMs: 1});
    send("reply.completed", {requestId: r, modalities: ["text"]});
    log.push("replied"); window.__done = "replied";
  }
};
</script>`

// findChromium returns the browser to use, or "".
func findChromium() string {
	if p := os.Getenv("RPENGINE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// cdp is a minimal Chrome DevTools Protocol client.
type cdp struct {
	c       *websocket.Conn
	mu      sync.Mutex // guards following
	next    int
	pending map[int]chan cdpMsg
	handler func(cdpMsg) // events, called on their own goroutine
	done    chan struct{}
	wg      sync.WaitGroup
}

type cdpMsg struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func dialCDP(ctx context.Context, wsURL string, handler func(cdpMsg)) (*cdp, error) {
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(64 << 20)
	d := &cdp{c: c, pending: map[int]chan cdpMsg{}, handler: handler, done: make(chan struct{})}
	go d.read()
	return d, nil
}

func (d *cdp) read() {
	defer close(d.done)
	for {
		_, data, err := d.c.Read(context.Background())
		if err != nil {
			return
		}
		var m cdpMsg
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.ID != 0 {
			d.mu.Lock()
			ch := d.pending[m.ID]
			delete(d.pending, m.ID)
			d.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if d.handler != nil {
			d.wg.Add(1)
			go func() { defer d.wg.Done(); d.handler(m) }()
		}
	}
}

// call sends a command (on a target session when sessionID is set) and
// returns its result.
func (d *cdp) call(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	d.mu.Lock()
	d.next++
	id := d.next
	ch := make(chan cdpMsg, 1)
	d.pending[id] = ch
	d.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	b, _ := json.Marshal(msg)
	if err := d.c.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-d.done:
		return nil, fmt.Errorf("%s: DevTools connection closed", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (d *cdp) close() {
	d.c.CloseNow()
	<-d.done
	d.wg.Wait()
}

// browser is a headless Chromium with a DevTools connection. Pages under
// intercepted origins are served from DevTools (Fetch.fulfillRequest).
type browser struct {
	cmd  *exec.Cmd
	wait chan error
	cdp  *cdp
}

func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--disable-dev-shm-usage", "--user-data-dir="+dir, "--remote-debugging-port=0", "about:blank")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	testutil.Success(t, cmd.Start())
	b := &browser{cmd: cmd, wait: make(chan error, 1)}
	go func() { b.wait <- cmd.Wait() }()
	t.Cleanup(func() { b.stop(t) })
	// Chromium writes its port and browser target path there once ready.
	var port, path2 string
	deadline := time.Now().Add(30 * time.Second)
	for port == "" {
		if data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) == 2 {
				port, path2 = lines[0], lines[1]
				break
			}
		}
		select {
		case err := <-b.wait:
			b.wait <- err
			t.Fatalf("chromium exited: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium wrote no DevToolsActivePort:\n%s", stderr.String())
		}
	}
	d, err := dialCDP(ctxT(t), "ws://127.0.0.1:"+port+path2, b.onEvent)
	testutil.Success(t, err)
	b.cdp = d
	return b
}

// pages maps intercepted URLs (origin + "/") to nothing: every request to
// an intercepted origin gets browserPage.
func (b *browser) onEvent(m cdpMsg) {
	if m.Method != "Fetch.requestPaused" {
		return
	}
	var p struct {
		RequestID string `json:"requestId"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, body := 200, browserPage
	if u, err := url.Parse(p.Request.URL); err != nil || u.Path != "/" {
		status, body = 404, "not found"
	}
	_, _ = b.cdp.call(ctx, m.SessionID, "Fetch.fulfillRequest", map[string]any{
		"requestId": p.RequestID, "responseCode": status,
		"responseHeaders": []map[string]string{{"name": "Content-Type", "value": "text/html; charset=utf-8"}},
		"body":            base64.StdEncoding.EncodeToString([]byte(body)),
	})
}

func (b *browser) stop(t *testing.T) {
	if b.cdp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = b.cdp.call(ctx, "", "Browser.close", nil)
		cancel()
	}
	select {
	case <-b.wait:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.wait
	}
	if b.cdp != nil {
		b.cdp.close()
	}
}

// open loads pageURL in a new tab, intercepting its origin when
// intercept is set, and waits for the page's outcome.
func (b *browser) open(t *testing.T, pageURL string, intercept bool) (done string, log []string) {
	t.Helper()
	ctx := ctxT(t)
	res, err := b.cdp.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	testutil.Success(t, err)
	var target struct{ TargetID string }
	testutil.Success(t, json.Unmarshal(res, &target))
	defer func() {
		_, _ = b.cdp.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID})
	}()
	res, err = b.cdp.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	testutil.Success(t, err)
	var att struct{ SessionID string }
	testutil.Success(t, json.Unmarshal(res, &att))
	if intercept {
		u, _ := url.Parse(pageURL)
		// A page DevTools serves has no address, so Chromium's Local
		// Network Access rules treat it as public and block its
		// connection to loopback (net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS)
		// before our server sees it. Grant the permission (its name
		// changed across versions; unknown names are refused), so that the
		// server's own check is what is tested. A player grants the real
		// RPEngine page the same way when Chromium asks.
		for _, perm := range []string{"localNetworkAccess", "localNetwork", "loopbackNetwork"} {
			_, err = b.cdp.call(ctx, "", "Browser.grantPermissions", map[string]any{
				"origin": u.Scheme + "://" + u.Host, "permissions": []string{perm}})
			if err != nil {
				t.Logf("cannot grant %s: %v", perm, err)
			}
		}
		_, err = b.cdp.call(ctx, att.SessionID, "Fetch.enable", map[string]any{
			"patterns": []map[string]string{{"urlPattern": u.Scheme + "://" + u.Host + "/*"}}})
		testutil.Success(t, err)
	}
	_, err = b.cdp.call(ctx, att.SessionID, "Page.navigate", map[string]any{"url": pageURL})
	testutil.Success(t, err)
	for {
		res, err := b.cdp.call(ctx, att.SessionID, "Runtime.evaluate", map[string]any{
			"expression": `JSON.stringify({done: window.__done || "", log: window.__log || []})`, "returnByValue": true})
		testutil.Success(t, err)
		var v struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		testutil.Success(t, json.Unmarshal(res, &v))
		var st struct {
			Done string   `json:"done"`
			Log  []string `json:"log"`
		}
		if json.Unmarshal([]byte(v.Result.Value), &st) == nil && st.Done != "" {
			return st.Done, st.Log
		}
		select {
		case <-ctx.Done():
			t.Fatalf("page %s never finished: %s", pageURL, v.Result.Value)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// servePage serves browserPage on l until the test ends.
func servePage(t *testing.T, l net.Listener) {
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(browserPage))
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close(); <-done })
}

func TestBrowser(t *testing.T) {
	path := findChromium()
	if path == "" {
		t.Skip("no Chromium found (/usr/bin/chromium, chromium, chromium-browser, google-chrome or RPENGINE_CHROMIUM): " +
			"the real-browser test is skipped; on Debian: apt-get install -y chromium")
	}
	if testing.Short() {
		t.Skip("-short: the real-browser test starts Chromium")
	}
	t.Parallel()
	// The development origin is exactly http://127.0.0.1:5173. Serve the
	// page there when the port is free; otherwise the browser still loads
	// it from that origin, with DevTools answering the request.
	devIntercept := false
	if l, err := net.Listen("tcp", "127.0.0.1:5173"); err == nil {
		servePage(t, l)
		t.Log("page served on http://127.0.0.1:5173")
	} else {
		devIntercept = true
		t.Logf("port 5173 is busy (%v): the page at http://127.0.0.1:5173 is served through DevTools request interception", err)
	}
	b := startBrowser(t, path)
	dev := newTCPServer(t, &rpengine.ServerOptions{DevelopmentMode: true})
	prod := newTCPServer(t, nil)
	page := func(origin string, f *fixture) string {
		return origin + "/#ws=" + url.QueryEscape(f.url)
	}

	t.Run("development mode on", func(t *testing.T) {
		ctx := ctxT(t)
		type result struct {
			res *rpengine.Result
			err error
		}
		got := make(chan result, 1)
		go func() {
			info, err := dev.srv.WaitSession(ctx)
			if err != nil {
				got <- result{nil, err}
				return
			}
			if info.ClientVersion != "chromium-test" {
				got <- result{nil, errors.New("session from " + info.ClientVersion)}
				return
			}
			r, err := dev.srv.Reply(ctx, textReq(testCard(t), "hi from Go"))
			if err != nil {
				got <- result{nil, err}
				return
			}
			var deltas []string
			for ev := range r.Events() {
				if ev.Kind == rpengine.EventText {
					deltas = append(deltas, ev.Text)
				}
			}
			res, err := r.Wait(ctx)
			if err == nil && len(deltas) == 0 {
				err = errors.New("no text events")
			}
			got <- result{res, err}
		}()
		done, log := b.open(t, page(rpengine.OriginDevelopment, dev), devIntercept)
		testutil.Equal(t, "page outcome", done, "replied")
		testutil.Equal(t, "page log", log, []string{"open", "welcome", "request hi from Go", "replied"})
		r := <-got
		testutil.Success(t, r.err)
		testutil.Equal(t, "reply streamed back", r.res.Text, "Hello from Chromium.")
	})

	t.Run("development mode off", func(t *testing.T) {
		mark := len(prod.log.String())
		done, log := b.open(t, page(rpengine.OriginDevelopment, prod), devIntercept)
		testutil.Equal(t, "page outcome", done, "closed 1006")
		testutil.Equal(t, "page log", log, []string{"error", "close 1006"})
		prod.log.waitSince(t, mark, `origin \"http://127.0.0.1:5173\" is not allowed`)
		_, live := prod.srv.Session()
		testutil.Equal(t, "no session", live, false)
	})

	// Other origins are refused even in development mode: another local
	// port, localhost instead of 127.0.0.1, and a public site.
	for _, origin := range []string{"http://127.0.0.1:5174", "http://localhost:5173", "https://evil.example"} {
		t.Run("other origin "+origin, func(t *testing.T) {
			mark := len(dev.log.String())
			done, log := b.open(t, page(origin, dev), true)
			testutil.Equal(t, "page outcome", done, "closed 1006")
			testutil.Equal(t, "page log", log, []string{"error", "close 1006"})
			dev.log.waitSince(t, mark, `origin \"`+origin+`\" is not allowed`)
		})
	}

	// A page served from another local port, for real (not intercepted).
	t.Run("other local server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		testutil.Success(t, err)
		servePage(t, l)
		origin := "http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		mark := len(dev.log.String())
		done, _ := b.open(t, page(origin, dev), false)
		testutil.Equal(t, "page outcome", done, "closed 1006")
		dev.log.waitSince(t, mark, `origin \"`+origin+`\" is not allowed`)
	})

	// The production page (https) reaching ws://127.0.0.1 works from a
	// real browser with development mode off: loopback is a secure
	// context, so this is not blocked as mixed content.
	t.Run("production origin", func(t *testing.T) {
		ctx := ctxT(t)
		errc := make(chan error, 1)
		go func() {
			for {
				info, err := prod.srv.WaitSession(ctx)
				if err != nil {
					errc <- err
					return
				}
				if info.ClientVersion == "chromium-test" {
					break
				}
			}
			r, err := prod.srv.Reply(ctx, textReq(testCard(t), "prod"))
			if err == nil {
				_, err = r.Wait(ctx)
			}
			errc <- err
		}()
		done, _ := b.open(t, page(rpengine.OriginProduction, prod), true)
		testutil.Equal(t, "page outcome", done, "replied")
		testutil.Success(t, <-errc)
	})
}
