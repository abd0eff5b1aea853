package inspect

import (
	"crypto/subtle"
	"embed"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gamelink-go/gamelink/internal/wav"
)

//go:embed page
var pageFS embed.FS

var pageTemplate = template.Must(template.ParseFS(pageFS, "page/index.html"))

// URL returns the page's address for a listener at addr (as
// net.Listener.Addr().String() gives it, e.g. "127.0.0.1:6060"), with the
// token: what the game prints for its developer. Mounted under a prefix
// (http.StripPrefix), the page is at that prefix with the same query.
func (in *Inspector) URL(addr string) string {
	return "http://" + addr + "/?token=" + url.QueryEscape(in.token)
}

// ServeHTTP serves the page and what it fetches. Every request must
// arrive on a loopback address, name it (or localhost, with its port) as
// Host, and carry the token as the query's token parameter; others get
// HTTP 403 (405 for a method other than GET or HEAD, 503 once closed).
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; media-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	if why := in.refuse(r); why != "" {
		http.Error(w, "inspect: "+why, http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "inspect: GET only", http.StatusMethodNotAllowed)
		return
	}
	select {
	case <-in.done:
		http.Error(w, "inspect: closed", http.StatusServiceUnavailable)
		return
	default:
	}
	switch r.URL.Path {
	case "/", "":
		h.Set("Content-Type", "text/html; charset=utf-8")
		_ = pageTemplate.Execute(w, in.token)
	case "/app.js", "/app.css":
		http.ServeFileFS(w, r, pageFS, "page"+r.URL.Path)
	case "/events":
		if r.Method != http.MethodGet {
			http.Error(w, "inspect: GET only", http.StatusMethodNotAllowed)
			return
		}
		in.serveEvents(w, r)
	case "/wav":
		in.serveWAV(w, r)
	case "/log":
		in.serveEntry(w, r)
	default:
		http.NotFound(w, r)
	}
}

// refuse says why r is refused, or "".
func (in *Inspector) refuse(r *http.Request) string {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, ok := la.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return "served only on a loopback address"
	}
	port := strconv.Itoa(tcp.Port)
	if r.Host != net.JoinHostPort(tcp.IP.String(), port) && r.Host != "localhost:"+port {
		return "Host " + strconv.Quote(r.Host) + " is not this listener's loopback address"
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(in.token)) != 1 {
		return "wrong or missing token: open the URL the game printed"
	}
	return ""
}

// serveWAV serves a complete segment as a PCM16 WAV file.
func (in *Inspector) serveWAV(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	seg, err := strconv.Atoi(q.Get("segment"))
	if err != nil {
		http.Error(w, "inspect: bad segment", http.StatusBadRequest)
		return
	}
	in.mu.Lock()
	var pcm []byte
	var rate int
	if rp := in.byID[q.Get("reply")]; rp != nil {
		if s := rp.segs[seg]; s != nil && s.view.Complete {
			pcm, rate = s.pcm, s.view.SampleRate // immutable once complete
		}
	}
	in.mu.Unlock()
	if pcm == nil {
		http.Error(w, "inspect: no such segment kept", http.StatusNotFound)
		return
	}
	pcm = pcm[:len(pcm)&^1] // whole samples
	head, err := wav.AppendHeader(nil, wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16}, int64(len(pcm)))
	if err != nil {
		http.Error(w, "inspect: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(pcm)))
	_, _ = w.Write(head)
	_, _ = w.Write(pcm)
}

// serveEntry serves one protocol log entry's JSON, audio elided.
func (in *Inspector) serveEntry(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	in.mu.Lock()
	e, ok := in.log.get(id)
	in.mu.Unlock()
	if err != nil || !ok || e.json == nil {
		http.Error(w, "inspect: no such message kept", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(e.json)
}
