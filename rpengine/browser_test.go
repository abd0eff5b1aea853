package rpengine_test

// A real browser against the server (issue #9): headless Chromium, driven
// with chromedp (issue #36; internal/chromiumtest starts it), loads a page
// whose script opens a WebSocket to the game server, completes
// hello/welcome, receives a reply.request and streams a reply back. The page's origin is exactly what a browser
// sends, so this checks the origin rules end to end.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/gamelink-go/gamelink/internal/chromiumtest"
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

// open loads pageURL in a new tab of browser, serving every request to
// its origin with browserPage through DevTools (Fetch.fulfillRequest)
// when intercept is set, and waits for the page's outcome.
func open(t *testing.T, browser context.Context, pageURL string, intercept bool) (done string, log []string) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	served := make(chan struct{})
	defer func() { cancel(); <-served }()
	testutil.Success(t, chromedp.Do(tab)) // opens the tab
	if !intercept {
		close(served)
	} else {
		u, _ := url.Parse(pageURL)
		origin := u.Scheme + "://" + u.Host
		// A page DevTools serves has no address, so Chromium's Local
		// Network Access rules treat it as public and block its
		// connection to loopback (net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS)
		// before our server sees it. Grant the permission (its name
		// changed across versions; unknown names are refused), so that the
		// server's own check is what is tested. A player grants the real
		// RPEngine page the same way when Chromium asks.
		for _, perm := range []string{"localNetworkAccess", "localNetwork", "loopbackNetwork"} {
			err := chromedp.FromContext(tab).Browser.Call(tab, "Browser.grantPermissions", map[string]any{"origin": origin, "permissions": []string{perm}}, nil)
			if err != nil {
				t.Logf("cannot grant %s: %v", perm, err)
			}
		}
		paused := chromedp.Events(tab, fetch.RequestPaused)
		_, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: origin + "/*"}}})
		testutil.Success(t, err)
		go func() {
			defer close(served)
			for ev, err := range paused { // ends with the tab
				if err != nil {
					return
				}
				status, body := int64(200), browserPage
				if u, err := url.Parse(ev.Request.URL); err != nil || u.Path != "/" {
					status, body = 404, "not found"
				}
				_, _ = chromedp.Call(tab, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: status,
					ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}}, Body: []byte(body)})
			}
		}()
	}
	ctx, stop := context.WithTimeout(tab, 20*time.Second)
	defer stop()
	testutil.Success(t, chromedp.Do(ctx, chromedp.Navigate(pageURL)))
	v, err := chromedp.Run(ctx, chromedp.Poll[string](`window.__done && JSON.stringify({done: window.__done, log: window.__log})`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("page %s never finished: %v", pageURL, err)
	}
	var st struct {
		Done string   `json:"done"`
		Log  []string `json:"log"`
	}
	testutil.Success(t, json.Unmarshal([]byte(v), &st))
	return st.Done, st.Log
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
	b := chromiumtest.New(t)
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
		done, log := open(t, b, page(rpengine.OriginDevelopment, dev), devIntercept)
		testutil.Equal(t, "page outcome", done, "replied")
		testutil.Equal(t, "page log", log, []string{"open", "welcome", "request hi from Go", "replied"})
		r := <-got
		testutil.Success(t, r.err)
		testutil.Equal(t, "reply streamed back", r.res.Text, "Hello from Chromium.")
	})

	t.Run("development mode off", func(t *testing.T) {
		mark := len(prod.log.String())
		done, log := open(t, b, page(rpengine.OriginDevelopment, prod), devIntercept)
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
			done, log := open(t, b, page(origin, dev), true)
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
		done, _ := open(t, b, page(origin, dev), false)
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
		done, _ := open(t, b, page(rpengine.OriginProduction, prod), true)
		testutil.Equal(t, "page outcome", done, "replied")
		testutil.Success(t, <-errc)
	})
}
