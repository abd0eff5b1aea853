package neurosan

import (
	"context"
	"net/http"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// Health is the answer of a health probe.
type Health struct {
	// Service is the server's name ("neuro-san.Agent" unless configured).
	Service string `json:"service"`
	// Status is "ok".
	Status string `json:"status"`
	// Versions maps library names to their installed versions, for
	// example "neuro-san": "0.6.31"; "unknown" when the server cannot
	// tell.
	Versions map[string]string `json:"versions"`
}

// Ready asks the server's readiness probe (GET /readyz, which / and
// /healthz also answer): whether it serves requests. A server that is up
// but not ready answers 503 {"error": "Service Unavailable"}, a
// [*StatusError] matching ErrUnavailable, which Ready does not retry: a
// launcher polls. A server that is not up yet gives the transport's error
// (connection refused). The server also answers the probes on a port of
// their own (AGENT_HEALTH_PROBE_PORT, 8081 by default): to use it, make a
// Client for that port.
func (c *Client) Ready(ctx context.Context) (_ *Health, err error) {
	defer errd.Wrap(&err, "neurosan: ready")
	return c.probe(ctx, wire.ProbeReady)
}

// Live asks the server's liveness probe (GET /livez): whether its process
// runs, ready or not. Errors are as for [Client.Ready].
func (c *Client) Live(ctx context.Context) (_ *Health, err error) {
	defer errd.Wrap(&err, "neurosan: live")
	return c.probe(ctx, wire.ProbeLive)
}

func (c *Client) probe(ctx context.Context, path string) (*Health, error) {
	var h Health
	if err := c.callJSON(ctx, http.MethodGet, path, "", c.base+"/"+path, nil, -1, &h); err != nil {
		return nil, err
	}
	return &h, nil
}
