package neuro_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// The window tests below check parity with the official Unity and Godot
// SDKs' ActionWindow, against every fake mode. Issue #19 item 6.

var chestAction = neuro.Action{Name: "pick_reward", Description: "Pick a reward from the chest.",
	Schema: neuro.Object(map[string]neuro.Schema{"reward": neuro.Enum("gold", "sword")}, "reward").JSON()}

// firstAt returns when the server first received cmd, and whether it did.
func firstAt(srv *neurotest.Server, cmd string) (time.Time, bool) {
	for _, m := range srv.Received() {
		if m.Command == cmd {
			return m.At, true
		}
	}
	return time.Time{}, false
}

// TestWindow_registersWithoutForcing: a window without a force sends its
// context right before its registration, never forces, and ends when Neuro
// uses one of its actions on her own (unregistering it before the result).
func TestWindow_registersWithoutForcing(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		// (Opened while disconnected, the context would follow the whole
		// set registered on connect: queued messages keep their order.)
		e.wait("connected", func() bool { return e.c.IsConnected() && slices.Contains(e.srv.Commands(), "startup") })
		h, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction}, Context: "You found a chest."}, neuro.ForceRefuse)
		testutil.Success(t, err)
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		time.Sleep(time.Minute)
		synctest.Wait()
		cmds := e.srv.Commands()
		i := slices.Index(cmds, "context")
		if i < 0 || i+1 >= len(cmds) || cmds[i+1] != "actions/register" {
			t.Fatalf("the context must come right before the registration: %v", cmds)
		}
		c := e.srv.Contexts()
		testutil.Equal(t, "context", len(c) == 1 && c[0].Message == "You found a chest." && !c[0].Silent, true)
		testutil.Equal(t, "forces", countCmd(cmds, "actions/force"), 0)
		testutil.Equal(t, "outcome while open", h.Outcome(), neuro.ForcePending)
		e.srv.Act("pick_reward")
		o := waitOutcome(t, h)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
		e.wait("result", func() bool { return len(e.srv.Results()) == 1 })
		cmds = e.srv.Commands()
		if iu, ir := slices.Index(cmds, "actions/unregister"), slices.Index(cmds, "action/result"); iu < 0 || iu > ir {
			t.Fatalf("unregister must precede the result: %v", cmds)
		}
		testutil.Equal(t, "success", e.srv.Results()[0].Success, true)
		testutil.Equal(t, "client actions", len(e.c.Actions()), 0)
		noFindingsAbove(t, e.srv, neuro.SeverityInfo)
	})
}

// TestWindow_forceAfterDelay: the force waits for ForceAfter; the window
// then completes as a forced one.
func TestWindow_forceAfterDelay(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		start := time.Now()
		h, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose a reward."}, ForceAfter: 10 * time.Second}, neuro.ForceRefuse)
		testutil.Success(t, err)
		o := waitOutcome(t, h)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
		at, ok := firstAt(e.srv, "actions/force")
		testutil.Equal(t, "forced", ok, true)
		testutil.Equal(t, "force sent after", at.Sub(start), 10*time.Second)
		noFindingsAbove(t, e.srv, neuro.SeverityInfo)
	})
}

// TestWindow_forceWhenCondition: the force waits for its condition, which
// is checked only once ForceAfter has passed.
func TestWindow_forceWhenCondition(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		var ready atomic.Bool
		var calls atomic.Int32
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		start := time.Now()
		h, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose a reward."}, ForceAfter: 2 * time.Second,
			ForceWhen: func() bool { calls.Add(1); return ready.Load() }}, neuro.ForceRefuse)
		testutil.Success(t, err)
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "condition not checked before ForceAfter", calls.Load(), int32(0))
		time.Sleep(4 * time.Second)
		synctest.Wait()
		testutil.Equal(t, "forces while the condition is false", countCmd(e.srv.Commands(), "actions/force"), 0)
		if calls.Load() == 0 {
			t.Fatal("condition never checked")
		}
		ready.Store(true)
		o := waitOutcome(t, h)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
		at, _ := firstAt(e.srv, "actions/force")
		if d := at.Sub(start); d < 5*time.Second || d > 5*time.Second+time.Second/10 {
			t.Errorf("force sent %v after opening; want within a tick of 5s", d)
		}
		n := calls.Load()
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "condition no longer checked once forced", calls.Load(), n)
	})
}

// TestWindow_conditionsCheckedByPoll: in poll mode the conditions run in
// Poll, on the game's goroutine, and only there.
func TestWindow_conditionsCheckedByPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ready atomic.Bool
		var calls atomic.Int32
		e := newPollEnv(t, nil, nil)
		e.start()
		h, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose a reward."}, ForceWhen: func() bool { calls.Add(1); return ready.Load() }}, neuro.ForceRefuse)
		testutil.Success(t, err)
		ready.Store(true)
		time.Sleep(time.Minute)
		synctest.Wait()
		testutil.Equal(t, "calls without Poll", calls.Load(), int32(0))
		testutil.Equal(t, "forces without Poll", countCmd(e.srv.Commands(), "actions/force"), 0)
		e.c.Poll(nil)
		testutil.Equal(t, "calls", calls.Load(), int32(1))
		o := waitOutcome(t, h)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
	})
}

// TestWindow_endsWithoutForce: before it forces, a window ends after
// EndAfter (timed out) or when EndWhen holds (cancelled): its actions are
// unregistered and its force is never sent.
func TestWindow_endsWithoutForce(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		var over atomic.Bool
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		start := time.Now()
		never := func() bool { return false }
		timed, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose."}, ForceWhen: never, EndAfter: 5 * time.Second}, neuro.ForceRefuse)
		testutil.Success(t, err)
		door := neuro.Action{Name: "open_door", Description: "Open the door."}
		cond, err := e.c.Window(neuro.Window{Actions: []neuro.Action{door}, EndWhen: over.Load}, neuro.ForceRefuse)
		testutil.Success(t, err)
		o := waitOutcome(t, timed)
		testutil.Equal(t, "timer outcome", o, neuro.ForceTimedOut)
		testutil.Equal(t, "ended after", time.Since(start), 5*time.Second)
		testutil.Equal(t, "condition window still open", cond.Outcome(), neuro.ForcePending)
		over.Store(true)
		o = waitOutcome(t, cond)
		testutil.Equal(t, "condition outcome", o, neuro.ForceCancelled)
		e.wait("unregistered", func() bool { return len(e.srv.Actions()) == 0 })
		testutil.Equal(t, "forces", countCmd(e.srv.Commands(), "actions/force"), 0)
		testutil.Equal(t, "client actions", len(e.c.Actions()), 0)
		noFindingsAbove(t, e.srv, neuro.SeverityInfo)
	})
}

// TestWindow_endTimerStopsOnceForced: once the window has forced, only the
// force's own timeout ends it, as in the official SDKs.
func TestWindow_endTimerStopsOnceForced(t *testing.T) {
	forEachMode(t, &neurotest.Options{Delay: 10 * time.Second}, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		e.begin(m)
		h, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose."}, ForceAfter: time.Second, EndAfter: 5 * time.Second}, neuro.ForceRefuse)
		testutil.Success(t, err)
		o := waitOutcome(t, h)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
	})
}

// TestWindow_deferredForceWaitsForTheSlot: a deferred window force that
// meets another force waits for it, even with ForceRefuse.
func TestWindow_deferredForceWaitsForTheSlot(t *testing.T) {
	forEachMode(t, &neurotest.Options{Delay: 5 * time.Second}, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.begin(m)
		plain, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		w, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction},
			Force: &neuro.Force{Query: "Choose."}, ForceAfter: time.Second}, neuro.ForceRefuse)
		testutil.Success(t, err)
		o := waitOutcome(t, w)
		testutil.Equal(t, "window", o, neuro.ForceCompleted)
		testutil.Equal(t, "plain force", plain.Outcome(), neuro.ForceCompleted)
		for _, f := range e.srv.Findings() {
			if f.Key == "prot/force/multiple" {
				t.Errorf("overlapping forces: %v", f)
			}
		}
	})
}

// TestWindow_openIsAllOrNothing: a window that cannot open sends nothing
// and changes nothing.
func TestWindow_openIsAllOrNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &neurotest.Options{Delay: time.Hour}, nil)
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.start()
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		_, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		e.wait("force", func() bool { return countCmd(e.srv.Commands(), "actions/force") == 1 })
		before := len(e.srv.Received())
		var ce *neuro.ConflictError
		for _, tc := range []struct {
			name string
			w    neuro.Window
			want func(error) bool
		}{
			{"busy", neuro.Window{Actions: []neuro.Action{chestAction}, Context: "c", Force: &neuro.Force{Query: "q"}},
				func(err error) bool { return errors.Is(err, neuro.ErrForceBusy) }},
			{"conflict", neuro.Window{Actions: []neuro.Action{placeAction(nil, nil)}, Context: "c"},
				func(err error) bool { return errors.As(err, &ce) }},
			{"bad priority", neuro.Window{Actions: []neuro.Action{chestAction}, Context: "c", Force: &neuro.Force{Query: "q", Priority: 9}},
				func(err error) bool { return err != nil }},
			{"no actions", neuro.Window{Context: "c"}, func(err error) bool { return err != nil }},
			{"condition without force", neuro.Window{Actions: []neuro.Action{chestAction}, ForceWhen: func() bool { return true }},
				func(err error) bool { return err != nil }},
		} {
			_, err := e.c.Window(tc.w, neuro.ForceRefuse)
			if !tc.want(err) {
				t.Errorf("%s: error %v", tc.name, err)
			}
		}
		testutil.Equal(t, "client actions", strings.Join(e.c.Actions(), ","), "place")
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "nothing sent", len(e.srv.Received()), before)
	})
}

// TestClient_recentlyUnregisteredAction: an action unregistered a moment
// ago (by the game, or by a window that ended) is answered as such, not
// as unknown; after 10 s it is unknown again.
func TestClient_recentlyUnregisteredAction(t *testing.T) {
	forEachMode(t, nil, func(t *testing.T, m fakeMode, so *neurotest.Options) {
		e := newEnv(t, so, &neuro.Options{ReconnectMin: time.Second})
		testutil.Success(t, e.c.Register(placeAction(nil, nil), neuro.Action{Name: "pass", Description: "Pass."}))
		e.begin(m)
		e.wait("register", func() bool { return len(e.srv.Actions()) > 0 })
		w, err := e.c.Window(neuro.Window{Actions: []neuro.Action{chestAction}, Force: &neuro.Force{Query: "Choose."}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		o := waitOutcome(t, w)
		testutil.Equal(t, "window", o, neuro.ForceCompleted)
		testutil.Success(t, e.c.Unregister("pass"))
		e.wait("result", func() bool { return len(e.srv.Results()) == 1 })
		answer := func(name string) neuro.Result {
			t.Helper()
			n := len(e.srv.Results())
			e.srv.SendAction(name, "")
			e.wait("answer", func() bool { return len(e.srv.Results()) == n+1 })
			r := e.srv.Results()[n]
			return neuro.Result{Success: r.Success, Message: r.Message}
		}
		for _, name := range []string{"pick_reward", "pass"} {
			r := answer(name)
			testutil.Equal(t, name+" success", r.Success, false)
			if !strings.Contains(r.Message, `"`+name+`" was unregistered a moment ago`) || !strings.Contains(r.Message, "available actions: place") {
				t.Errorf("%s: message %q", name, r.Message)
			}
		}
		time.Sleep(10 * time.Second)
		r := answer("pass")
		if !strings.Contains(r.Message, `unknown action "pass"`) {
			t.Errorf("after 10 s: message %q", r.Message)
		}
	})
}

// waitOutcome waits for a window's final outcome for at most ten minutes of
// the bubble's fake time, so that a window that never ends fails the test
// at once instead of spinning until the test binary's timeout.
func waitOutcome(t *testing.T, h *neuro.ForceHandle) neuro.ForceOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("the window did not end: %v (outcome %v)", err, h.Outcome())
	}
	return o
}
