package ws

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// rejection is why an upgrade request was refused, before any upgrade.
type rejection struct {
	status int
	reason string
}

// check applies the acceptance rules to an upgrade request: exact path,
// Host of 127.0.0.1:PORT or localhost:PORT (DNS-rebinding defence), an
// exact Origin from the allow-list, and no request body. It returns nil
// when the request may be upgraded. port is the local port the request
// arrived on. The peer's values in a reason are bounded and escaped
// (issue #16: a 60 KiB path was logged whole).
func (o *Options) check(r *http.Request, port int) *rejection {
	if r.URL.Path != Path || r.URL.RawPath != "" {
		return &rejection{http.StatusNotFound, "path " + peertext.Quote(r.URL.Path, peertext.LogBytes) + " is not " + Path}
	}
	p := strconv.Itoa(port)
	if r.Host != "127.0.0.1:"+p && r.Host != "localhost:"+p {
		return &rejection{http.StatusForbidden, "host " + peertext.Quote(r.Host, peertext.LogBytes) + " is not 127.0.0.1:" + p + " or localhost:" + p}
	}
	if !o.InsecureSkipOriginCheck {
		origins := r.Header.Values("Origin")
		switch {
		case len(origins) == 0:
			return &rejection{http.StatusForbidden, "no Origin header"}
		case len(origins) > 1:
			return &rejection{http.StatusForbidden, "several Origin headers"}
		case !o.Origins[origins[0]]:
			return &rejection{http.StatusForbidden, "origin " + peertext.Quote(origins[0], peertext.LogBytes) + " is not allowed"}
		}
	}
	if body := declaredBody(r); body != "" {
		// A browser's upgrade request never has one. net/http would read
		// and discard it while switching protocols (issue #16).
		return &rejection{http.StatusBadRequest, "request declares a body (" + body + ")"}
	}
	return nil
}

// declaredBody describes the body r declares, or returns "" when it
// declares none.
func declaredBody(r *http.Request) string {
	switch {
	case len(r.TransferEncoding) > 0:
		return "Transfer-Encoding: " + peertext.Clip(strings.Join(r.TransferEncoding, ", "), peertext.LogBytes)
	case r.ContentLength != 0:
		return "Content-Length: " + strconv.FormatInt(r.ContentLength, 10)
	}
	return ""
}

// localPort returns the port the request arrived on.
func localPort(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if t, ok := a.(*net.TCPAddr); ok {
			return t.Port
		}
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			n, _ := strconv.Atoi(p)
			return n
		}
	}
	return -1
}
