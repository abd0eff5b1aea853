package neurosan_test

import (
	"context"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// A launcher asks the probes whether the server is up and ready. Issue #25.
func TestClient_Ready(t *testing.T) {
	t.Parallel()
	s := startFake(t, nil)
	c := fakeClient(t, s, nil)
	h, err := c.Ready(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "health", *h, neurosan.Health{Service: "neuro-san.Agent", Status: "ok", Versions: map[string]string{"neuro-san": "unknown"}})
	h, err = c.Live(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "live", h.Status, "ok")
}

// Not ready is a 503 that the probe does not retry; the liveness probe
// still answers.
func TestClient_Ready_notReady(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{NotReady: true})
	c := fakeClient(t, s, nil)
	_, err := c.Ready(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
	var se *neurosan.StatusError
	testutil.ErrorAs(t, err, &se)
	testutil.Equal(t, "message", se.Message, "Service Unavailable")
	testutil.Equal(t, "not retried", s.Requests(), 1)
	_, err = c.Live(context.Background())
	testutil.Success(t, err)
}

// A server that is not up says so at once (nothing listens on port 1).
func TestClient_Ready_down(t *testing.T) {
	t.Parallel()
	_, err := newClient(t, "http://127.0.0.1:1", nil).Ready(context.Background())
	testutil.Error(t, err)
}
