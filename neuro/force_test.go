package neuro_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// TestClient_forceQueueBounded: ForceQueue refuses past MaxQueue instead of
// growing without bound.
func TestClient_forceQueueBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &neurotest.Options{Delay: time.Hour}, &neuro.Options{MaxQueue: 2})
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		f := neuro.Force{Query: "go", Actions: []string{"place"}}
		_, err := e.c.Force(f, neuro.ForceRefuse)
		testutil.Success(t, err)
		_, err = e.c.Force(f, neuro.ForceQueue)
		testutil.Success(t, err)
		_, err = e.c.Force(f, neuro.ForceQueue)
		testutil.Success(t, err)
		_, err = e.c.Force(f, neuro.ForceQueue)
		testutil.ErrorIs(t, err, neuro.ErrQueueFull)
	})
}

func TestClient_forceInvalidPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		for _, p := range []neuro.Priority{-1, neuro.PriorityCritical + 1} {
			_, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}, Priority: p}, neuro.ForceRefuse)
			if err == nil {
				t.Errorf("priority %d accepted", int(p))
			}
		}
		_, err := e.c.Force(neuro.Force{Query: "go"}, neuro.ForceRefuse)
		if err == nil {
			t.Error("force without actions accepted")
		}
	})
}

// TestClient_cancelledUnsentForceNeverSent: a force cancelled before any
// connection opened must not reach Neuro when one does.
func TestClient_cancelledUnsentForceNeverSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		h, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		h.Cancel()
		testutil.Success(t, e.c.ContextSilent("after"))
		e.start()
		e.wait("context", func() bool { return countCmd(e.srv.Commands(), "context") == 1 })
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "forces sent", countCmd(e.srv.Commands(), "actions/force"), 0)
		testutil.Equal(t, "outcome", h.Outcome(), neuro.ForceCancelled)
	})
}

// TestClient_cancelQueuedAndOutstanding: cancelling a queued force removes
// it from the queue; cancelling the outstanding one starts the next.
func TestClient_cancelQueuedAndOutstanding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &neurotest.Options{Delay: 5 * time.Second}, nil)
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.start()
		f := neuro.Force{Query: "go", Actions: []string{"place"}}
		h1, err := e.c.Force(f, neuro.ForceRefuse)
		testutil.Success(t, err)
		h2, err := e.c.Force(f, neuro.ForceQueue)
		testutil.Success(t, err)
		h3, err := e.c.Force(f, neuro.ForceQueue)
		testutil.Success(t, err)
		h2.Cancel()
		testutil.Equal(t, "h2", h2.Outcome(), neuro.ForceCancelled)
		e.wait("first force", func() bool { return e.srv.Forcing() })
		h1.Cancel()
		testutil.Equal(t, "h1", h1.Outcome(), neuro.ForceCancelled)
		synctest.Wait()
		// The slot is free at once: h3 goes out now, not when Neuro
		// happens to answer the cancelled h1.
		testutil.Equal(t, "forces sent on cancel", countCmd(e.srv.Commands(), "actions/force"), 2)
		o3, err := h3.Wait(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "h3", o3, neuro.ForceCompleted)
		time.Sleep(time.Minute)
		synctest.Wait()
		// h1 and h3 went out; the cancelled queued h2 never did.
		testutil.Equal(t, "forces sent", countCmd(e.srv.Commands(), "actions/force"), 2)
		var got []neuro.ForceOutcome
		for _, ev := range e.eventsOf(func(ev neuro.Event) bool { _, ok := ev.(neuro.ForceUpdate); return ok }) {
			got = append(got, ev.(neuro.ForceUpdate).Outcome)
		}
		want := []neuro.ForceOutcome{neuro.ForceCancelled, neuro.ForceCancelled, neuro.ForceCompleted}
		testutil.Equal(t, "force updates", len(got), len(want))
		for i := range want {
			if i < len(got) && got[i] != want[i] {
				t.Errorf("update %d = %v, want %v", i, got[i], want[i])
			}
		}
	})
}

// TestClient_forceWaitHonoursCtx: Wait returns the ctx error while the
// force goes on.
func TestClient_forceWaitHonoursCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &neurotest.Options{Delay: time.Hour}, nil)
		testutil.Success(t, e.c.Register(placeAction(nil, nil)))
		e.start()
		h, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		o, err := h.Wait(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait error %v", err)
		}
		testutil.Equal(t, "outcome", o, neuro.ForcePending)
	})
}

// TestClient_actionBeforeForceSentDoesNotAnswerIt: an unforced action that
// arrives while the force is still held unsent does not complete it.
func TestClient_actionBeforeForceSentDoesNotAnswerIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		testutil.Success(t, e.c.Register(placeAction(neuro.Bind(func(ctx context.Context, args struct{ Cell int }) neuro.Result {
			if args.Cell == 1 {
				time.Sleep(300 * time.Millisecond) // keeps the force held
			}
			return neuro.OK("")
		}), nil)))
		e.start()
		e.wait("register", func() bool { return len(e.srv.Actions()) == 1 })
		e.srv.SendAction("place", `{"cell":1}`)
		synctest.Wait()
		h, err := e.c.Force(neuro.Force{Query: "go", Actions: []string{"place"}}, neuro.ForceRefuse)
		testutil.Success(t, err)
		e.srv.SendAction("place", `{"cell":2}`)
		synctest.Wait()
		testutil.Equal(t, "outcome while held", h.Outcome(), neuro.ForcePending)
		o, err := h.Wait(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "outcome", o, neuro.ForceCompleted)
		testutil.Equal(t, "forces sent", countCmd(e.srv.Commands(), "actions/force"), 1)
	})
}
