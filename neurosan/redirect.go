package neurosan

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// maxRedirects bounds the redirects one request follows, as net/http's
// default policy does.
const maxRedirects = 10

// followRedirects returns a copy of hc whose requests follow a redirect
// only where [New] would have let the base URL go without a warning, then
// as hc's own CheckRedirect says (or at most maxRedirects). A server
// behind a proxy may redirect legitimately, but never to a place the game
// was not pointed at (docs/neurosan-protocol.md, "Redirects"; issue #34).
func followRedirects(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if why := redirectRefused(via[0].URL, req.URL); why != "" {
			return errors.New("neurosan: redirect to " + peertext.Quote(req.URL.Redacted(), peertext.LogBytes) + " not followed: " + why)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("neurosan: stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// redirectRefused says why a request to from may not be redirected to
// to, or returns "": to must be http:// or https:// with a host and no
// user information, as a base URL; a request to this machine stays on it;
// and plain http:// to another machine is followed only to the host the
// base URL named (New warned about that one).
func redirectRefused(from, to *url.URL) string {
	switch {
	case to.Scheme != "http" && to.Scheme != "https" || to.Host == "":
		return "not http:// or https:// with a host"
	case to.User != nil:
		return "it carries user information"
	case isLoopback(from.Hostname()) && !isLoopback(to.Hostname()):
		return "the base URL is on this machine and the redirect leaves it"
	case to.Scheme == "http" && !isLoopback(to.Hostname()) &&
		!(from.Scheme == "http" && strings.EqualFold(from.Hostname(), to.Hostname())):
		return "plain http to a host that is not loopback"
	}
	return ""
}
