package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// simFaults is the hidden --sim-faults flag: comma-separated knobs of the
// simulated engine, for tests and for seeing the demo cope with a bad
// engine by hand.
//
//	error=CODE          answer every request with request.error CODE
//	delay=DURATION      wait before every reply message
//	disconnect-after=N  drop the connection once, after N engine messages,
//	                    then come back (a page reload)
//	cancel=REASON       answer the first request with reply.cancelled REASON
//	cancel-lost         cancel=connection_lost (the turn is sent again)
//	gone                never come back after a disconnect
//	full                report the queue full (acceptingRequests false)
type simFaults struct {
	errorCode       string
	delay           time.Duration
	disconnectAfter int
	cancelReason    string
	gone            bool
	full            bool
	raw             string
}

func (f *simFaults) String() string { return f.raw }

func (f *simFaults) Set(s string) error {
	f.raw = s
	for kv := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k {
		case "error":
			f.errorCode = v
			if v == "" {
				err = fmt.Errorf("error= needs a code")
			}
		case "delay":
			f.delay, err = time.ParseDuration(v)
		case "disconnect-after":
			f.disconnectAfter, err = strconv.Atoi(v)
			if err == nil && f.disconnectAfter < 1 {
				err = fmt.Errorf("disconnect-after must be at least 1")
			}
		case "cancel-lost":
			f.cancelReason = "connection_lost"
		case "cancel":
			f.cancelReason = v
			if v == "" {
				err = fmt.Errorf("cancel= needs a reason")
			}
		case "gone":
			f.gone = true
		case "full":
			f.full = true
		case "":
		default:
			err = fmt.Errorf("unknown fault %q", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sim is the offline engine: enginetest's fake RPEngine, dialed over real
// loopback to the demo's server, brought back after a disconnect as a
// browser reloading the page would be.
type sim struct {
	eng    atomic.Pointer[enginetest.Engine]
	faults simFaults
	logf   func(string, ...any)
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   atomic.Bool // the cancel fault fired
}

// startSim connects the fake engine with dial and starts its supervisor.
func startSim(ctx context.Context, dial func(context.Context, *enginetest.Options) (*enginetest.Engine, error),
	f simFaults, logf func(string, ...any)) (*sim, error) {
	s := &sim{faults: f, logf: logf}
	opts := &enginetest.Options{
		ClientVersion: "rpengine-demo sim",
		Responder:     s.respond,
		Faults: enginetest.Faults{
			ErrorCode:       f.errorCode,
			Delay:           f.delay,
			DisconnectAfter: f.disconnectAfter,
			CapacityFull:    f.full,
		},
		Logf: logf,
	}
	eng, err := dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.eng.Store(eng)
	sctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go s.supervise(sctx)
	return s, nil
}

// respond is the fake engine's script: the default echo, and the cancel
// fault on the first request (the rest of that request's reply then goes
// to a request the server has ended, which it drops).
func (s *sim) respond(r enginetest.Request) enginetest.Script {
	if s.faults.cancelReason != "" && s.once.CompareAndSwap(false, true) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = s.eng.Load().Send(ctx, "reply.cancelled", map[string]any{"requestId": r.RequestID, "reason": s.faults.cancelReason})
		return enginetest.Script{Sentences: []string{"(lost)"}}
	}
	return enginetest.DefaultScript(r)
}

// supervise reconnects the engine after its connection drops, once the
// disconnect fault has been spent, as a reloaded page would.
func (s *sim) supervise(ctx context.Context) {
	defer s.wg.Done()
	eng := s.eng.Load()
	for {
		done := eng.Done()
		if done == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-done:
		}
		if ctx.Err() != nil || s.faults.gone {
			return
		}
		f := eng.Faults()
		f.DisconnectAfter = 0
		eng.SetFaults(f)
		s.logf("sim: engine connection dropped; reconnecting as a reloaded page would")
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := eng.Reconnect(rctx)
		cancel()
		if err != nil {
			s.logf("sim: reconnect failed: %v", err)
			return
		}
	}
}

// Close stops the supervisor and the fake engine.
func (s *sim) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.eng.Load().Close()
}
