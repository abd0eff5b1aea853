package neurosan_test

import (
	"net/http"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// startFake starts a fake server that Close stops when the test ends.
func startFake(t *testing.T, opts *neurosantest.Options) *neurosantest.Server {
	t.Helper()
	s := neurosantest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// fakeClient returns a client of the fake s, connected in memory.
func fakeClient(t *testing.T, s *neurosantest.Server, opts *neurosan.Options) *neurosan.Client {
	t.Helper()
	var o neurosan.Options
	if opts != nil {
		o = *opts
	}
	o.HTTPClient = s.Client()
	if o.RetryBackoff == 0 {
		o.RetryBackoff = 1e6 // 1 ms: real-time tests only check counts
	}
	c, err := neurosan.New(s.URL, &o)
	testutil.Success(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// newClient returns a client of another server, with its own transport,
// closed at cleanup so no keep-alive goroutine outlives the test.
func newClient(t *testing.T, url string, opts *neurosan.Options) *neurosan.Client {
	t.Helper()
	var o neurosan.Options
	if opts != nil {
		o = *opts
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	o.HTTPClient = &http.Client{Transport: tr}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = 1e6 // 1 ms: real-time tests only check counts
	}
	c, err := neurosan.New(url, &o)
	testutil.Success(t, err)
	return c
}
