package neuro_test

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// fakeMode is one way of running the fake: strict Neuro, Randy-like, or
// either of them restarted (the same address, a fresh server: ids from "0"
// again, no state kept) once the client had connected and answered an
// action. Issue #19.
type fakeMode struct {
	name    string
	mode    neurotest.Mode
	restart bool
}

var fakeModes = []fakeMode{
	{"strict", neurotest.Strict, false},
	{"randy", neurotest.Randy, false},
	{"strict-restarted", neurotest.Strict, true},
	{"randy-restarted", neurotest.Randy, true},
}

// forEachMode runs f in a synctest bubble once per fake mode, with so's
// Mode set accordingly.
func forEachMode(t *testing.T, so *neurotest.Options, f func(t *testing.T, m fakeMode, so *neurotest.Options)) {
	for _, m := range fakeModes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var o neurotest.Options
				if so != nil {
					o = *so
				}
				o.Mode = m.mode
				f(t, m, &o)
			})
		})
	}
}

// begin starts the client. In a restart mode it then waits for the
// connection, has the server send an action the client answers (so that
// id "0" is used up), restarts the server and waits until the client has
// connected to the fresh one and sent its startup.
func (e *env) begin(m fakeMode) {
	e.t.Helper()
	e.start()
	if !m.restart {
		return
	}
	e.wait("connected", func() bool { return slices.Contains(e.srv.Commands(), "startup") })
	id := e.srv.SendAction("probe_before_restart", "")
	e.wait("probe answered", func() bool { return len(e.srv.Results()) == 1 })
	testutil.Equal(e.t, "probe id", id, "0")
	e.srv.Restart()
	e.wait("reconnected", func() bool { return slices.Contains(e.srv.Commands(), "startup") && e.c.IsConnected() })
}

// noFindingsAbove fails on conformance findings more severe than sev.
func noFindingsAbove(t *testing.T, srv *neurotest.Server, sev neuro.Severity) {
	t.Helper()
	for _, f := range srv.Findings() {
		if f.Severity > sev {
			t.Errorf("conformance finding: %v", f)
		}
	}
}
