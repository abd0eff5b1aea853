package neuro_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// TestClient_restartedServerCountsIDsFromZero: after the server restarts,
// its ids start again at "0"; ids belong to a connection, so the client
// must answer them, and forces go on completing. Issue #19 item 1.
func TestClient_restartedServerCountsIDsFromZero(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.begin(m)
		force := func(what string) {
			t.Helper()
			h, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}, Timeout: time.Minute}, neuro.ForceRefuse)
			testutil.Success(t, err)
			o, _ := h.Wait(context.Background())
			testutil.Equal(t, what, o, neuro.ForceCompleted)
		}
		force("before the restart")
		e.srv.Restart()
		e.wait("reconnected", func() bool { return e.srv.Connects() == 1 && e.c.IsConnected() })
		force("first force after the restart")
		force("second force after the restart")
		e.wait("results", func() bool { return len(e.srv.Results()) == 2 })
		var ids []string
		for _, r := range e.srv.Results() {
			ids = append(ids, r.ID)
			testutil.Equal(t, "late", r.Late, false)
		}
		testutil.Equal(t, "ids answered by the fresh server", strings.Join(ids, ","), "0,1")
		noFindingsAbove(t, e.srv, neuro.SeverityInfo)
	})
}

// TestClient_restartWhileValidating: a verdict for an action of the old
// server arrives after the client reconnected to a fresh one, which has
// meanwhile sent an action with the same id; the stale verdict is dropped
// and the new action is answered on its own. Issue #19 item 1.
func TestClient_restartWhileValidating(t *testing.T) {
	forEachMode(t, &neurotest.Options{ResultTimeout: -1}, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		release := make(chan struct{})
		var validating atomic.Bool
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second, ActionTimeout: time.Minute})
		testutil.Success(t, e.c.Register(placeAction(neuro.Bind(func(ctx context.Context, a struct{ Cell int }) neuro.Result {
			if a.Cell == 1 {
				validating.Store(true)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return neuro.OK("old")
			}
			return neuro.OK("new")
		}), nil)))
		e.begin(m)
		e.wait("register", func() bool { return len(e.srv.Actions()) > 0 })
		old := e.srv.SendAction("place", `{"cell":1}`)
		e.wait("validating", validating.Load)
		e.srv.Restart()
		e.wait("reconnected", func() bool { return len(e.srv.Actions()) > 0 && e.c.IsConnected() })
		id := e.srv.SendAction("place", `{"cell":2}`)
		testutil.Equal(t, "same id as the stale one", id, old)
		e.wait("result", func() bool { return len(e.srv.Results()) == 1 })
		close(release)
		time.Sleep(time.Second)
		e.wait("settled", func() bool { return true })
		rs := e.srv.Results()
		testutil.Equal(t, "results", len(rs), 1)
		testutil.Equal(t, "the fresh action's verdict", rs[0].Message, "new")
	})
}

// TestClient_registersOncePerConnect: a reregister_all that crossed the
// registration sent on connect (Randy sends one on every connection) is
// not answered with a second, identical registration; a later one, a real
// request, is. Issue #19 item 2.
func TestClient_registersOncePerConnect(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.begin(m)
		e.wait("register", func() bool { return countCmd(e.srv.Commands(), "actions/register") >= 1 })
		time.Sleep(5 * time.Second)
		e.wait("settled", func() bool { return true })
		testutil.Equal(t, "commands", strings.Join(e.srv.Commands(), ","), "startup,actions/register")
		testutil.Equal(t, "server actions", strings.Join(e.srv.Actions(), ","), "place")
		for _, f := range e.srv.Findings() {
			t.Errorf("conformance finding: %v", f)
		}
		// A real request, later on the connection, is answered.
		e.srv.Send("actions/reregister_all", nil)
		e.wait("answer", func() bool { return countCmd(e.srv.Commands(), "actions/register") == 2 })
		noFindingsAbove(t, e.srv, neuro.SeverityInfo)
		for _, f := range e.srv.Findings() {
			if f.Key == "perf/register/identical_duplicate" {
				t.Errorf("an answer to reregister_all reported as a duplicate: %v", f)
			}
		}
	})
}
