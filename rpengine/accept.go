package rpengine

import (
	"net"
	"net/http"
	"strconv"
)

// rejection is why an upgrade request was refused, before any upgrade.
type rejection struct {
	status int
	reason string
}

// check applies the acceptance rules to an upgrade request: exact path,
// Host of 127.0.0.1:PORT or localhost:PORT (DNS-rebinding defence) and an
// exact Origin from the allow-list. It returns nil when the request may be
// upgraded. port is the local port the request arrived on.
func (o *serverOptions) check(r *http.Request, port int) *rejection {
	if r.URL.Path != SocketPath || r.URL.RawPath != "" {
		return &rejection{http.StatusNotFound, "path " + strconv.Quote(r.URL.Path) + " is not " + SocketPath}
	}
	p := strconv.Itoa(port)
	if r.Host != "127.0.0.1:"+p && r.Host != "localhost:"+p {
		return &rejection{http.StatusForbidden, "host " + strconv.Quote(r.Host) + " is not 127.0.0.1:" + p + " or localhost:" + p}
	}
	if o.InsecureSkipOriginCheck {
		return nil
	}
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) == 0:
		return &rejection{http.StatusForbidden, "no Origin header"}
	case len(origins) > 1:
		return &rejection{http.StatusForbidden, "several Origin headers"}
	case !o.origins[origins[0]]:
		return &rejection{http.StatusForbidden, "origin " + strconv.Quote(origins[0]) + " is not allowed"}
	}
	return nil
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
