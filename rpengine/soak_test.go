package rpengine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// TestSoak mixes every fault of the fault suite at random (issue #9):
// replies, captures, syncs and cancels from several goroutines while the
// engine duplicates, drops acks, refuses cards, fails, goes silent,
// flaps its capacity, disconnects and reconnects, and hostile bytes are
// injected. Invariants: no request is lost (every started request ends
// within a bound with a result from the allowed list), no panic, no
// leaked goroutine or connection, and the heap stays flat. It runs in
// memory inside a testing/synctest bubble: the timeouts it provokes
// (acks, silence, handshakes) take no real time.
//
// It runs 400 operations by default; RPENGINE_SOAK=N runs N (the long
// run), RPENGINE_SOAK_SEED=S replays a seed.
func TestSoak(t *testing.T) {
	// Not parallel: the heap must see only this test.
	ops := 400
	if s := os.Getenv("RPENGINE_SOAK"); s != "" {
		n, err := strconv.Atoi(s)
		testutil.Success(t, err)
		ops = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RPENGINE_SOAK_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		testutil.Success(t, err)
		seed = n
	}
	t.Logf("soak: %d operations, seed %d (RPENGINE_SOAK_SEED=%d replays it)", ops, seed, seed)
	synctest.Test(t, func(t *testing.T) {
		s := newSoak(t, seed)
		s.run(t, ops)
		s.close(t)
		quietConns(t, s.f, 0)
	})
}

type soak struct {
	seed uint64
	f    *fixture
	eng  *enginetest.Engine
	// engMu serialises Reconnect. A channel, not a sync.Mutex: a
	// goroutine waiting on a mutex is not durably blocked in a synctest
	// bubble, so while Reconnect waited on the fake clock holding it, a
	// second Reconnect waiting for the lock stopped the clock (TestSoak
	// hung in CI until killed).
	engMu   chan struct{}
	started atomic.Int64
	ended   atomic.Int64
	mu      sync.Mutex // guards following
	results map[string]int
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newSoak(t *testing.T, seed uint64) *soak {
	f := newServer(t, &rpengine.ServerOptions{AckTimeout: 500 * time.Millisecond, IdleTimeout: time.Second,
		MaxPendingAudio: 2 * time.Second, HandshakeTimeout: time.Second})
	eng := f.dial(t, &enginetest.Options{SecondsPerSentence: 0.1})
	s := &soak{seed: seed, f: f, eng: eng, results: map[string]int{}, stop: make(chan struct{}), engMu: make(chan struct{}, 1)}
	// The supervisor reconnects the engine whenever its connection ends,
	// as the browser does.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			done := eng.Done()
			if done == nil {
				done = closedChan
			}
			select {
			case <-s.stop:
				return
			case <-done:
			}
			select {
			case <-s.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			s.reconnect()
		}
	}()
	return s
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (s *soak) reconnect() {
	s.engMu <- struct{}{}
	defer func() { <-s.engMu }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.eng.Reconnect(ctx) // may fail while faults cut it; the supervisor retries
}

func (s *soak) note(what string) {
	s.mu.Lock()
	s.results[what]++
	s.mu.Unlock()
}

// allowed are the results a request may end with under these faults.
var allowed = []error{rpengine.ErrConnectionLost, rpengine.ErrNoAnswer, rpengine.ErrSlowConsumer,
	rpengine.ErrCancelled, rpengine.ErrResyncLoop, rpengine.ErrServerClosed}

func classify(err error) (string, bool) {
	if err == nil {
		return "completed", true
	}
	var re *rpengine.RequestError
	if errors.As(err, &re) {
		return "engine error " + re.Code, true
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return a.Error(), true
		}
	}
	return err.Error(), false
}

// finish waits for r to end (bounded: a request that does not end is
// lost), optionally consuming its events, and records the result.
func (s *soak) finish(t *testing.T, r *rpengine.Reply, consume int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; consume < 0 || i < consume; i++ {
		if _, err := r.Next(ctx); err != nil {
			break
		}
	}
	_, err := r.Wait(ctx)
	if ctx.Err() != nil {
		t.Errorf("seed %d: request %s lost: no result within 30 s", s.seed, r.RequestID())
		return
	}
	s.ended.Add(1)
	what, ok := classify(err)
	if !ok {
		t.Errorf("seed %d: request %s ended with an unexpected error: %v", s.seed, r.RequestID(), err)
	}
	s.note(what)
}

var soakFaults = []struct {
	name string
	f    enginetest.Faults
}{
	{"duplicate", enginetest.Faults{Duplicate: true}},
	{"drop acks", enginetest.Faults{DropAcks: true}},
	{"delay", enginetest.Faults{Delay: time.Millisecond}},
	{"force resync", enginetest.Faults{ForceResync: 3}},
	{"error", enginetest.Faults{ErrorCode: "prompt_too_large"}},
	{"error after accept", enginetest.Faults{ErrorCode: "unsupported_voice", ErrorAfterAccept: true}},
	{"resync always", enginetest.Faults{ErrorCode: "card_resync_required"}},
	{"unknown error code", enginetest.Faults{ErrorCode: "brand_new_code"}},
	{"ignore cancel", enginetest.Faults{IgnoreCancel: true, Delay: time.Millisecond}},
	{"silent", enginetest.Faults{Silent: true}},
	{"disconnect after 7", enginetest.Faults{DisconnectAfter: 7}},
	{"disconnect after 23", enginetest.Faults{DisconnectAfter: 23}},
	{"capacity full", enginetest.Faults{CapacityFull: true}},
	{"upstream hash", enginetest.Faults{UpstreamHash: true}},
	{"duplicate+drop acks+delay", enginetest.Faults{Duplicate: true, DropAcks: true, Delay: time.Millisecond}},
}

func (s *soak) op(t *testing.T, rng *rand.Rand, i int) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c := testCard(t, "curious", "curious "+strconv.Itoa(rng.IntN(3)))
	if rng.IntN(8) == 0 {
		c = testCard(t, numberCardFrom, numberCardTo) // a hash upstream never matches
	}
	start := func(r *rpengine.Reply, err error) *rpengine.Reply {
		if err != nil {
			s.note("not sent") // no engine, busy, or the session ended: nothing pending
			return nil
		}
		s.started.Add(1)
		return r
	}
	switch n := rng.IntN(100); {
	case n < 25:
		if r := start(s.f.srv.Reply(ctx, textReq(c, "soak "+strconv.Itoa(i)))); r != nil {
			s.finish(t, r, -1)
		}
	case n < 40:
		if r := start(s.f.srv.Reply(ctx, audioReq(c, "soak audio"))); r != nil {
			s.finish(t, r, -1)
		}
	case n < 45: // a game that stops reading
		if r := start(s.f.srv.Reply(ctx, audioReq(c, "unread"))); r != nil {
			s.finish(t, r, 0)
		}
	case n < 50:
		if r := start(s.f.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Transcript: true})); r != nil {
			s.finish(t, r, -1)
		}
	case n < 60: // cancel at a random point
		if r := start(s.f.srv.Reply(ctx, audioReq(c, "cancel"))); r != nil {
			for k := rng.IntN(6); k > 0; k-- {
				if _, err := r.Next(ctx); err != nil {
					break
				}
			}
			_ = r.Cancel(ctx)
			s.finish(t, r, -1)
		}
	case n < 70:
		_, err := s.f.srv.SyncCharacter(ctx, "game", "ari", c)
		what, ok := classify(err)
		if !ok && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("seed %d: sync ended with %v", s.seed, err)
		}
		s.note("sync " + what)
	case n < 78:
		f := soakFaults[rng.IntN(len(soakFaults))]
		s.eng.SetFaults(f.f)
		s.note("fault " + f.name)
	case n < 86:
		s.eng.SetFaults(enginetest.Faults{})
		s.eng.SetCapacity(true)
	case n < 89:
		s.reconnect()
		s.note("reconnect")
	case n < 95:
		garbage := [][]byte{[]byte("{"), []byte("\x00\x01"), []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.completed","messageId":"g` + strconv.Itoa(i) + `","sessionId":"other","timestamp":"t","requestId":"x"}`),
			[]byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"request.error","messageId":"e` + strconv.Itoa(i) + `","timestamp":"t","code":"invalid_payload","message":"injected"}`)}
		_ = s.eng.SendRaw(ctx, garbage[rng.IntN(len(garbage))])
		s.note("garbage")
	default:
		s.eng.SetCapacity(false)
		time.Sleep(time.Millisecond)
		s.eng.SetCapacity(true)
		s.note("capacity flap")
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (s *soak) run(t *testing.T, ops int) {
	const workers = 4
	var next atomic.Int64
	var wg sync.WaitGroup
	warm := ops / 5
	var warmHeap atomic.Uint64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s.seed, uint64(w)))
			for {
				i := int(next.Add(1))
				if i > ops {
					return
				}
				if i == warm {
					warmHeap.Store(heapAfterGC())
				}
				s.op(t, rng, i)
			}
		}()
	}
	wg.Wait()
	s.eng.SetFaults(enginetest.Faults{})
	end := heapAfterGC()
	started, ended := s.started.Load(), s.ended.Load()
	t.Logf("requests started %d, ended %d, lost %d", started, ended, started-ended)
	if started != ended {
		t.Errorf("seed %d: %d requests lost", s.seed, started-ended)
	}
	t.Logf("heap after GC: %d KiB after warm-up, %d KiB at the end", warmHeap.Load()>>10, end>>10)
	if end > warmHeap.Load()+16<<20 {
		t.Errorf("seed %d: heap grew from %d to %d bytes", s.seed, warmHeap.Load(), end)
	}
	var lines []string
	s.mu.Lock()
	for k, v := range s.results {
		lines = append(lines, fmt.Sprintf("%6d  %s", v, k))
	}
	s.mu.Unlock()
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
}

func (s *soak) close(t *testing.T) {
	close(s.stop)
	s.wg.Wait()
	s.engMu <- struct{}{}
	s.eng.Close()
	<-s.engMu
	// The server still works with a clean engine.
	newHealthy(t, s.f)
}
