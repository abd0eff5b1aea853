package rpengine_test

// Faults injected with enginetest (issue #9). For each: no hang (every
// wait is bounded and a bound reached is a failure), no leak (goleak in
// TestMain, and every connection the server gave up closed), no panic,
// and every request ends with a defined result from a short list. Each
// runs in memory inside a testing/synctest bubble, where the server's
// timeouts and the engine's delays take no real time.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// faultsInjected counts injected faults that the server survived.
var faultsInjected atomic.Int64

// endsDefined waits (bounded) for r to end and checks that its result is
// nil or matches one of allowed, and that its event stream ends with the
// same result. It returns the result.
func endsDefined(t *testing.T, r *rpengine.Reply, consume bool, allowed ...error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var last rpengine.Event
	if consume {
		for {
			ev, err := r.Next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("request %s: events hang", r.RequestID())
				}
				break
			}
			last = ev
		}
		if last.Kind == 0 { // the caller had consumed the end already
			consume = false
		}
	}
	_, err := r.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("request %s was lost: no result within 20 s", r.RequestID())
	}
	if consume {
		testutil.Equal(t, "last event", last.Kind, rpengine.EventEnd)
		if !errors.Is(last.Err, err) && !(last.Err == nil && err == nil) {
			t.Fatalf("end event %v, Wait %v", last.Err, err)
		}
	}
	if err == nil {
		return nil
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return err
		}
	}
	t.Fatalf("request %s ended with an unexpected result: %v", r.RequestID(), err)
	return err
}

// dialFault connects an engine without waiting for its session (it may
// end before the server sees it) and waits until the server either shows
// its session or it has ended.
func dialFault(t *testing.T, f *fixture, opts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	eng, err := enginetest.Dial(ctxT(t), f.url, f.engineOpts(opts))
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	done := eng.Done()
	for {
		if info, ok := f.srv.Session(); ok && info.ID == eng.SessionID() {
			return eng
		}
		select {
		case <-done:
			return eng
		case <-time.After(time.Millisecond):
		}
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T)
		// realTime runs it outside a bubble: capacity flapping races
		// requests against a clock that moves while they run, and in a
		// bubble a request takes no time at all.
		realTime bool
	}{
		{"disconnectAtEveryPoint", testFaultDisconnectEveryPoint, false},
		{"restartMidReply", testFaultRestartMidReply, false},
		{"lostAcks", testFaultLostAcks, false},
		{"resyncStorm", testFaultResyncStorm, false},
		{"capacityFlapping", testFaultCapacityFlapping, true},
		{"cancelRacesCompletion", testFaultCancelRace, false},
		{"gameStopsReading", testFaultStopsReading, false},
		{"duplicatedEngine", testFaultDuplicated, false},
	}
	t.Run("group", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				if tt.realTime {
					tt.run(t)
					return
				}
				synctest.Test(t, tt.run)
			})
		}
	})
	t.Logf("faults injected and survived: %d", faultsInjected.Load())
}

// testFaultDisconnectEveryPoint cuts the connection after the engine's
// n-th message, for every n from the first capacity.update to past the
// end of a text+audio reply, with and without duplicated messages.
func testFaultDisconnectEveryPoint(t *testing.T) {
	f := newServer(t, &rpengine.ServerOptions{FailFast: true})
	c := testCard(t)
	for _, dup := range []bool{false, true} {
		outcomes := map[string]int{}
		successes := 0
		for n := 1; successes < 2; n++ {
			if n > 200 {
				t.Fatal("the reply never completed")
			}
			eng := dialFault(t, f, &enginetest.Options{Faults: enginetest.Faults{DisconnectAfter: n, Duplicate: dup}})
			r, err := f.srv.Reply(ctxT(t), audioReq(c, "cut"))
			if err != nil {
				// The session ended before the request could be sent.
				if !errors.Is(err, rpengine.ErrNotConnected) && !errors.Is(err, rpengine.ErrConnectionLost) {
					t.Fatalf("n=%d: Reply: %v", n, err)
				}
				outcomes["not sent"]++
				eng.Close()
				continue
			}
			err = endsDefined(t, r, true, rpengine.ErrConnectionLost)
			if err == nil {
				successes++
				outcomes["completed"]++
			} else {
				successes = 0
				outcomes["connection lost"]++
			}
			faultsInjected.Add(1)
			eng.Close()
		}
		t.Logf("duplicate=%v: %v", dup, outcomes)
		if outcomes["connection lost"] < 10 {
			t.Errorf("only %d cut points inside the reply", outcomes["connection lost"])
		}
	}
	newHealthy(t, f)
	quietConns(t, f, 0)
}

// testFaultRestartMidReply restarts the engine (new session) after the
// game consumed k events of a reply, for each k.
func testFaultRestartMidReply(t *testing.T) {
	f := newServer(t, nil)
	eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 2 * time.Millisecond}})
	c := testCard(t)
	ctx := ctxT(t)
	for k := 0; k < 8; k++ {
		old := eng.SessionID()
		r, err := f.srv.Reply(ctx, audioReq(c, "restart"))
		testutil.Success(t, err)
		for i := 0; i < k; i++ {
			if _, err := r.Next(ctx); err != nil {
				break
			}
		}
		testutil.Success(t, eng.Reconnect(ctx))
		endsDefined(t, r, true, rpengine.ErrConnectionLost)
		waitSession(t, ctx, f.srv, func(info rpengine.SessionInfo) bool { return info.ID != old })
		// The new session gets a snapshot and a full reply.
		r2, err := f.srv.Reply(ctx, textReq(c, "after"))
		testutil.Success(t, err)
		testutil.Success(t, endsDefined(t, r2, true))
		modes := cardModes(eng)
		testutil.Equal(t, "fresh snapshot", modes[len(modes)-1], "snapshot")
		faultsInjected.Add(1)
	}
	quietConns(t, f, 1)
}

// testFaultLostAcks: an engine that never acks still answers (answers
// count), and one that neither acks nor answers fails with ErrNoAnswer.
func testFaultLostAcks(t *testing.T) {
	f := newServer(t, &rpengine.ServerOptions{AckTimeout: 300 * time.Millisecond, IdleTimeout: 500 * time.Millisecond})
	eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{DropAcks: true}})
	ctx := ctxT(t)
	c := testCard(t)
	r, err := f.srv.Reply(ctx, textReq(c, "no acks"))
	testutil.Success(t, err)
	testutil.Success(t, endsDefined(t, r, true))
	// Answered but never acked: pending until AckTimeout, then unacked.
	// (Bounded: in the bubble an endless poll would never time out.)
	for i := 0; i < 1000 && f.srv.MessageStatus(r.MessageID()) == rpengine.MessagePending; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	testutil.Equal(t, "never acked", f.srv.MessageStatus(r.MessageID()), rpengine.MessageUnacked)
	h, err := f.srv.SyncCharacter(ctx, "game", "ari", c)
	testutil.Success(t, err)
	testutil.Equal(t, "synced without ack", h.String() != "", true)
	faultsInjected.Add(2)

	eng.SetFaults(enginetest.Faults{DropAcks: true, Silent: true})
	r, err = f.srv.Reply(ctx, textReq(c, "silence"))
	testutil.Success(t, err)
	err = endsDefined(t, r, true, rpengine.ErrNoAnswer)
	testutil.ErrorIs(t, err, rpengine.ErrNoAnswer)
	// Acked but never produced: the idle timeout ends it, and it is
	// cancelled on the engine.
	eng.SetFaults(enginetest.Faults{Silent: true})
	r, err = f.srv.Reply(ctx, textReq(c, "accepted then silence"))
	testutil.Success(t, err)
	err = endsDefined(t, r, true, rpengine.ErrNoAnswer)
	testutil.ErrorIs(t, err, rpengine.ErrNoAnswer)
	faultsInjected.Add(2)
	eng.SetFaults(enginetest.Faults{})
	healthy(t, f, eng)
	quietConns(t, f, 1)
}

// testFaultResyncStorm: the engine loses its card cache on every patch or
// reference, for many concurrent requests and syncs of a changing card;
// each ends, and the number of attempts stays bounded (no loop).
func testFaultResyncStorm(t *testing.T) {
	f := newServer(t, nil)
	eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{ForceResync: 1 << 30}})
	ctx := ctxT(t)
	const rounds, per = 6, 4
	n := 0
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, per)
		for i := 0; i < per; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := testCard(t, "curious", fmt.Sprintf("curious %d", (round+i)%3))
				if i == 0 {
					_, err := f.srv.SyncCharacter(ctx, "game", "ari", c)
					errs <- err
					return
				}
				r, err := f.srv.Reply(ctx, textReq(c, "storm"))
				if err != nil {
					errs <- err
					return
				}
				_, err = r.Wait(ctx)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			// A snapshot always passes ForceResync, so each converges.
			testutil.Success(t, err)
			faultsInjected.Add(1)
			n++
		}
	}
	modes := cardModes(eng)
	resyncs := len(modes) - n
	if resyncs < rounds-1 || len(modes) > 3*n {
		t.Fatalf("%d card transfers (%d resyncs) for %d requests: %v", len(modes), resyncs, n, modes)
	}
	t.Logf("%d requests, %d card transfers, %d refused by the storm", n, len(modes), resyncs)

	// A card whose hash the engine can never match (upstream number
	// printing) together with the storm: still bounded.
	eng.SetFaults(enginetest.Faults{ForceResync: 1 << 30, UpstreamHash: true})
	c := testCard(t, numberCardFrom, numberCardTo)
	before := len(cardModes(eng))
	for i := 0; i < 4; i++ {
		r, err := f.srv.Reply(ctx, textReq(c, "numbers"))
		testutil.Success(t, err)
		endsDefined(t, r, true, rpengine.ErrResyncLoop, rpengine.ErrCardResyncRequired)
		faultsInjected.Add(1)
	}
	if got := len(cardModes(eng)) - before; got > 12 {
		t.Fatalf("%d transfers for 4 requests", got)
	}
	quietConns(t, f, 1)
}

// testFaultCapacityFlapping flips acceptingRequests every millisecond
// while requests are made, waiting and fail-fast.
func testFaultCapacityFlapping(t *testing.T) {
	for _, failFast := range []bool{false, true} {
		f := newServer(t, &rpengine.ServerOptions{FailFast: failFast})
		eng := f.dial(t, nil)
		stop := make(chan struct{})
		flips := make(chan int)
		var flipped atomic.Int64
		go func() {
			n := 0
			for accepting := false; ; accepting = !accepting {
				select {
				case <-stop:
					eng.SetCapacity(true)
					flips <- n
					return
				case <-time.After(time.Millisecond):
					eng.SetCapacity(accepting)
					n++
					flipped.Store(int64(n))
				}
			}
		}()
		ctx := ctxT(t)
		c := testCard(t)
		results := map[string]int{}
		for i := 0; i < 30 || flipped.Load() < 20; i++ {
			if i > 5000 {
				t.Fatal("capacity never flipped")
			}
			r, err := f.srv.Reply(ctx, textReq(c, "flap"))
			if err != nil {
				if !errors.Is(err, rpengine.ErrBusy) {
					t.Fatalf("Reply: %v", err)
				}
				results["busy"]++
				time.Sleep(100 * time.Microsecond)
				continue
			}
			if err := endsDefined(t, r, i%2 == 0, rpengine.ErrCapacityExceeded); err != nil {
				results["capacity_exceeded"]++
			} else {
				results["completed"]++
			}
		}
		close(stop)
		n := <-flips
		faultsInjected.Add(int64(n))
		t.Logf("failFast=%v: %d flips, %v", failFast, n, results)
		// The last flip (accepting) may still be on its way behind earlier
		// ones: a marker the game acks once it has read them all.
		mark, err := eng.Send(ctx, "capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		if err == nil {
			_, err = eng.WaitFor(ctx, func(m enginetest.Message) bool {
				return m.Type == "ack" && strings.Contains(string(m.Raw), mark)
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		healthy(t, f, eng)
		waitConns(t, f, 1)
	}
}

// testFaultCancelRace cancels replies at every point, including after
// completion, with an engine that honours and one that ignores cancels.
func testFaultCancelRace(t *testing.T) {
	f := newServer(t, nil)
	eng := f.dial(t, nil)
	c := testCard(t)
	ctx := ctxT(t)
	for _, ignore := range []bool{false, true} {
		eng.SetFaults(enginetest.Faults{IgnoreCancel: ignore, Delay: time.Millisecond})
		results := map[string]int{}
		for k := 0; k < 16; k++ {
			r, err := f.srv.Reply(ctx, audioReq(c, "cancel me"))
			testutil.Success(t, err)
			for i := 0; i < k; i++ {
				if _, err := r.Next(ctx); err != nil {
					break
				}
			}
			testutil.Success(t, r.Cancel(ctx))
			if err := endsDefined(t, r, true, rpengine.ErrCancelled); err != nil {
				results["cancelled"]++
			} else {
				results["completed"]++
			}
			testutil.Success(t, r.Cancel(ctx)) // after the end: a no-op
			faultsInjected.Add(1)
		}
		t.Logf("ignoreCancel=%v: %v", ignore, results)
	}
	eng.SetFaults(enginetest.Faults{})
	healthy(t, f, eng)
	quietConns(t, f, 1)
}

// testFaultStopsReading: a game that never consumes a long audio reply.
// The reply ends with ErrSlowConsumer and is cancelled on the engine; the
// connection's reader is never blocked (another reply completes meanwhile).
func testFaultStopsReading(t *testing.T) {
	f := newServer(t, &rpengine.ServerOptions{MaxPendingAudio: time.Second})
	long := strings.Repeat("A sentence. ", 12)
	eng := f.dial(t, &enginetest.Options{Responder: func(r enginetest.Request) enginetest.Script {
		if r.Text == "long" {
			return enginetest.Script{Sentences: strings.Split(strings.TrimSpace(long), " ")}
		}
		return enginetest.DefaultScript(r)
	}})
	ctx := ctxT(t)
	c := testCard(t)
	r, err := f.srv.Reply(ctx, audioReq(c, "long"))
	testutil.Success(t, err)
	err = endsDefined(t, r, false, rpengine.ErrSlowConsumer)
	testutil.ErrorIs(t, err, rpengine.ErrSlowConsumer)
	_, err = eng.WaitFor(ctx, func(m enginetest.Message) bool {
		return m.Type == "request.cancel" && strings.Contains(string(m.Raw), r.RequestID())
	})
	testutil.Success(t, err)
	faultsInjected.Add(1)
	// Queued events stay bounded and end with the error.
	var n int
	for ev := range r.Events() {
		n++
		if ev.Kind == rpengine.EventEnd {
			testutil.ErrorIs(t, ev.Err, rpengine.ErrSlowConsumer)
		}
	}
	if n > 64 {
		t.Errorf("%d events held for a slow consumer", n)
	}
	healthy(t, f, eng)
	quietConns(t, f, 1)
}

// testFaultDuplicated: an engine that sends every message twice and never
// acks, over many concurrent replies of each kind.
func testFaultDuplicated(t *testing.T) {
	f := newServer(t, nil)
	eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Duplicate: true, DropAcks: true}})
	ctx := ctxT(t)
	c := testCard(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r *rpengine.Reply
			var err error
			if i%2 == 0 {
				r, err = f.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Transcript: true,
					Voice: "M2"})
			} else {
				r, err = f.srv.Reply(ctx, audioReq(c, "twice"))
			}
			if err != nil {
				t.Error(err)
				return
			}
			var anomalies, segs int
			for ev := range r.Events() {
				switch ev.Kind {
				case rpengine.EventAnomaly:
					anomalies++
				case rpengine.EventSegment:
					segs++
				}
			}
			if _, err := r.Wait(ctx); err != nil || anomalies != 0 || segs != 2 {
				t.Errorf("reply %d: %v, %d anomalies, %d segments", i, err, anomalies, segs)
			}
		}()
	}
	wg.Wait()
	faultsInjected.Add(8)
	// The voice capture's second phase too: the engine keeps one capture
	// at a time, so they were serialised; the server stays healthy.
	eng.SetFaults(enginetest.Faults{})
	healthy(t, f, eng)
	quietConns(t, f, 1)
}

// TestServer_failFastSessionEnding: with FailFast, a request made while
// the live session is being taken down (its connection lost) fails with
// ErrNotConnected, as with no session. It failed with ErrBusy, as if the
// engine had said it was full (TestFaults/disconnectAtEveryPoint, now and
// then, when a request fell in that window).
func TestServer_failFastSessionEnding(t *testing.T) {
	t.Parallel()
	l := enginetest.NewListener()
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{FailFast: true, Logger: discardLogger()})
	testutil.Success(t, err)
	ctx := ctxT(t)
	c := testCard(t)
	errs := make(chan error, 1)
	rpengine.OnSessionEnded(srv, func() {
		_, err := srv.Reply(ctx, textReq(c, "still there?"))
		errs <- err
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		testutil.Success(t, srv.Close())
		testutil.ErrorIs(t, <-served, rpengine.ErrServerClosed)
	})
	eng, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
	testutil.Success(t, err)
	waitSession(t, ctx, srv, func(info rpengine.SessionInfo) bool { return info.ID == eng.SessionID() })
	eng.Close()
	select {
	case err := <-errs:
		testutil.ErrorIs(t, err, rpengine.ErrNotConnected)
	case <-ctx.Done():
		t.Fatal("the session never ended")
	}
}
