package neurosan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/memnet"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// servePipe serves h in the bubble and returns a client of it; everything
// is torn down before the bubble ends.
func servePipe(t *testing.T, h http.Handler, opts *neurosan.Options) *neurosan.Client {
	t.Helper()
	l := memnet.NewListener("127.0.0.1:8080")
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	var o neurosan.Options
	if opts != nil {
		o = *opts
	}
	o.HTTPClient = l.Client()
	c, err := neurosan.New("http://127.0.0.1:8080", &o)
	testutil.Success(t, err)
	return c
}

// newFake returns an unstarted fake for servePipe, closed at cleanup: like
// the real server, it goes on with a turn its client left until it next
// writes, so a test may end with a script still running.
func newFake(t *testing.T, opts *neurosantest.Options) *neurosantest.Server {
	t.Helper()
	s := neurosantest.NewUnstartedServer(opts)
	t.Cleanup(s.Close)
	return s
}

// sleeper answers after d of (fake) time, or returns when cancelled.
func sleeper(d time.Duration) neurosantest.Agent {
	return neurosantest.Agent{Name: "sleeper", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		select {
		case <-time.After(d):
			return neurosantest.Reply{Text: "awake"}
		case <-ctx.Done():
			return neurosantest.Reply{}
		}
	}}
}

func TestStream_idleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(time.Hour)}})
		c := servePipe(t, fake, &neurosan.Options{IdleTimeout: 30 * time.Second})
		start := time.Now()
		st, err := c.StreamingChat(t.Context(), "sleeper", &neurosan.ChatRequest{Text: "zz"})
		testutil.Success(t, err)
		defer st.Close()
		_, err = st.Next(context.Background())
		testutil.ErrorIs(t, err, neurosan.ErrIdleTimeout)
		testutil.Equal(t, "fake time waited", time.Since(start), 30*time.Second)
		// A silent MINIMAL turn: the server learns that the client left
		// only when it writes the answer, an hour later.
		testutil.Success(t, fake.WaitIdle(t.Context()))
		testutil.Equal(t, "server noticed at its answer", time.Since(start), time.Hour)
		testutil.Equal(t, "server saw the cancel", fake.Turns()[0].Cancelled, true)
	})
}

// Closing a stream drops the connection, but the server learns of it only
// at its next write. With MINIMAL and no heartbeat (the server's defaults)
// that is the answer: until then the agents run on and hold their
// concurrency slot, so the player's next turn gets a 503. With MAXIMAL the
// next message tells it, with a heartbeat the next beat. Issue #25.
func TestStream_Close_serverNoticesAtNextWrite(t *testing.T) {
	chatty := neurosantest.Agent{Name: "chatty", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		for range 6 {
			select {
			case <-time.After(10 * time.Second):
			case <-ctx.Done():
				return neurosantest.Reply{}
			}
			if tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "step"}) != nil {
				return neurosantest.Reply{}
			}
		}
		return neurosantest.Reply{Text: "done"}
	}}
	tests := []struct {
		name      string
		filter    neurosan.ChatFilter
		heartbeat time.Duration
		noticed   time.Duration // when the fake frees the slot, from the start
	}{
		{"MINIMAL, no heartbeat: at the answer", neurosan.FilterMinimal, 0, time.Minute},
		{"MAXIMAL: at the next message", neurosan.FilterMaximal, 0, 20 * time.Second},
		{"MINIMAL with a heartbeat: at the next beat", neurosan.FilterMinimal, 15 * time.Second, 15 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{chatty}, ConcurrencyLimit: 1, Heartbeat: tc.heartbeat})
				c := servePipe(t, fake, &neurosan.Options{Retries: -1})
				start := time.Now()
				st, err := c.StreamingChat(t.Context(), "chatty", &neurosan.ChatRequest{Text: "go", Filter: tc.filter})
				testutil.Success(t, err)
				if tc.filter == neurosan.FilterMaximal {
					m, err := st.Next(context.Background()) // the first step, at 10 s
					testutil.Success(t, err)
					testutil.Equal(t, "step", m.Text, "step")
				}
				time.Sleep(12*time.Second - time.Since(start))
				st.Close()
				synctest.Wait()
				_, err = c.StreamingChat(t.Context(), "chatty", &neurosan.ChatRequest{Text: "again"})
				testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
				testutil.Success(t, fake.WaitIdle(t.Context()))
				testutil.Equal(t, "slot freed at", time.Since(start), tc.noticed)
				turn := fake.Turns()[0]
				testutil.Equal(t, "cancelled", turn.Cancelled, true)
				testutil.Equal(t, "done", turn.Done, true)
			})
		})
	}
}

// A caller's context that ends closes the connection too, with the same
// delay on the server's side.
func TestStreamingChat_contextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(time.Minute)}})
		c := servePipe(t, fake, nil)
		ctx, cancel := context.WithCancel(t.Context())
		st, err := c.StreamingChat(ctx, "sleeper", &neurosan.ChatRequest{Text: "go"})
		testutil.Success(t, err)
		defer st.Close()
		time.AfterFunc(10*time.Second, cancel)
		_, err = st.Next(context.Background())
		testutil.ErrorIs(t, err, context.Canceled)
		testutil.Success(t, fake.WaitIdle(t.Context()))
		testutil.Equal(t, "cancelled", fake.Turns()[0].Cancelled, true)
	})
}

// Heartbeats every 10 s keep a 30 s idle timeout from firing during a
// two-minute turn.
func TestStream_heartbeatKeepsAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(2 * time.Minute)}, Heartbeat: 10 * time.Second})
		c := servePipe(t, fake, &neurosan.Options{IdleTimeout: 30 * time.Second})
		st, err := c.StreamingChat(t.Context(), "sleeper", &neurosan.ChatRequest{Text: "zz"})
		testutil.Success(t, err)
		defer st.Close()
		ans, err := st.Answer(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "answer", ans.Text, "awake")
		// At 10 s … 110 s, and maybe at 120 s: the ticker and the answer are
		// ready at the same instant there, and either may be written first.
		if hb := st.Heartbeats(); hb < 11 || hb > 12 {
			t.Errorf("heartbeats: got %d, want 11 or 12", hb)
		}
	})
}

// A heartbeat is written only after Heartbeat of silence: a script that
// emits a step every 6 s never lets a 10 s heartbeat fire.
func TestStream_heartbeatOnlyWhenSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chatty := neurosantest.Agent{Name: "chatty", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
			for i := range 5 {
				time.Sleep(6 * time.Second)
				if tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: fmt.Sprint("step ", i)}) != nil {
					return neurosantest.Reply{}
				}
			}
			time.Sleep(6 * time.Second)
			return neurosantest.Reply{Text: "done"}
		}}
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{chatty}, Heartbeat: 10 * time.Second})
		c := servePipe(t, fake, nil)
		st, err := c.StreamingChat(t.Context(), "chatty", &neurosan.ChatRequest{Text: "go", Filter: neurosan.FilterMaximal})
		testutil.Success(t, err)
		defer st.Close()
		ans, err := st.Answer(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "answer", ans.Text, "done")
		testutil.Equal(t, "heartbeats", st.Heartbeats(), 0)
	})
}

func TestStream_turnTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(time.Hour)}, Heartbeat: 10 * time.Second})
		c := servePipe(t, fake, &neurosan.Options{TurnTimeout: time.Minute, IdleTimeout: 30 * time.Second})
		start := time.Now()
		st, err := c.StreamingChat(t.Context(), "sleeper", &neurosan.ChatRequest{Text: "zz"})
		testutil.Success(t, err)
		defer st.Close()
		_, err = st.Answer(context.Background())
		testutil.ErrorIs(t, err, neurosan.ErrTurnTimeout)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		testutil.Equal(t, "fake time waited", time.Since(start), time.Minute)
	})
}

func TestStream_callerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(time.Hour)}})
		c := servePipe(t, fake, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
		defer cancel()
		st, err := c.StreamingChat(ctx, "sleeper", &neurosan.ChatRequest{Text: "zz"})
		testutil.Success(t, err)
		defer st.Close()
		_, err = st.Next(context.Background())
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		if errors.Is(err, neurosan.ErrTurnTimeout) {
			t.Errorf("caller's deadline reported as the turn timeout: %v", err)
		}
	})
}

// timed wraps h to record when each request arrived, since the start.
func timed(h http.Handler) (http.Handler, func() []time.Duration) {
	var mu sync.Mutex
	var at []time.Duration
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			h.ServeHTTP(w, r)
		}), func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(at)
		}
}

// retryGaps runs a turn that is answered 503 unavailable times, with
// RetryBackoff base, and returns the fake-time waits between requests.
func retryGaps(t *testing.T, base time.Duration, unavailable int) []time.Duration {
	t.Helper()
	fake := newFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), Unavailable: unavailable})
	h, times := timed(fake)
	c := servePipe(t, h, &neurosan.Options{RetryBackoff: base})
	st, err := c.StreamingChat(t.Context(), "math_guy", &neurosan.ChatRequest{Text: "x"})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Answer(context.Background())
	testutil.Success(t, err)
	at := times()
	testutil.Equal(t, "requests", len(at), unavailable+1)
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i]-at[i-1])
	}
	return gaps
}

// 503s are retried after 1 s, 2 s, 4 s (plus up to 25% jitter each).
func TestClient_retryBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gaps := retryGaps(t, time.Second, 3)
		for i, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			if gap := gaps[i]; gap < base || gap > base+base/4 {
				t.Errorf("retry %d waited %v, want %v to %v", i+1, gap, base, base+base/4)
			}
		}
	})
}

// The exponential back-off is capped at 30 s: with a 20 s base, the second
// retry waits 30 s, not 40 s or more.
func TestClient_retryBackoffCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gaps := retryGaps(t, 20*time.Second, 2)
		testutil.Equal(t, "capped second wait", gaps[1], 30*time.Second)
		// A RetryBackoff so large that doubling it overflows is capped too.
		testutil.Equal(t, "huge base", retryGaps(t, 1<<62, 2), []time.Duration{30 * time.Second, 30 * time.Second})
	})
}

func TestClient_retryAfter(t *testing.T) {
	tests := []struct {
		name, header string
		want         time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"capped", "120", 30 * time.Second},
		{"overflowing", "9223372037", 30 * time.Second}, // times time.Second wraps to a negative int64
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				start := time.Now()
				var second time.Duration
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n++
					if n == 1 {
						w.Header().Set("Retry-After", tc.header)
						w.WriteHeader(http.StatusServiceUnavailable)
						return
					}
					second = time.Since(start)
					w.Write([]byte(`{"agents":[]}`))
				})
				c := servePipe(t, h, nil)
				_, err := c.List(t.Context())
				testutil.Success(t, err)
				testutil.Equal(t, "waited Retry-After", second, tc.want)
			})
		})
	}
}

// A context that ends during the back-off ends the call at once.
func TestClient_retryCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{ShuttingDown: true})
		c := servePipe(t, fake, &neurosan.Options{RetryBackoff: time.Minute})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := c.List(ctx)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		testutil.Equal(t, "one request", fake.Requests(), 1)
	})
}

// The fake writes its lines without pausing by default, like the current
// server: MAXIMAL math_guy's answer, its fourth line, arrives at once. With
// LegacyLineDelay, as older servers paused 0.3 s after every line, it
// arrives at 0.9 s.
func TestFake_lineDelay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		want  time.Duration
	}{
		{"default", 0, 0},
		{"legacy", neurosantest.LegacyLineDelay, 3 * neurosantest.LegacyLineDelay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := newFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), LineDelay: tc.delay})
				c := servePipe(t, fake, nil)
				start := time.Now()
				sly := map[string]json.RawMessage{"x": json.RawMessage(`1`), "y": json.RawMessage(`2`)}
				st, err := c.StreamingChat(t.Context(), "math_guy", &neurosan.ChatRequest{Text: "x", SlyData: sly, Filter: neurosan.FilterMaximal})
				testutil.Success(t, err)
				defer st.Close()
				var last time.Duration
				for {
					m, err := st.Next(context.Background())
					testutil.Success(t, err)
					last = time.Since(start)
					if m.Type == neurosan.TypeAgentFramework {
						break
					}
				}
				testutil.Equal(t, "answer time", last, tc.want)
			})
		})
	}
}

// The idle countdown is paused during a 503 back-off: a 7 s Retry-After
// with a 5 s idle timeout still succeeds.
func TestStream_idlePausedDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), Unavailable: 1})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			fake.ServeHTTP(w, r)
		})
		c := servePipe(t, h, &neurosan.Options{IdleTimeout: 5 * time.Second})
		st, err := c.StreamingChat(t.Context(), "math_guy", &neurosan.ChatRequest{Text: "x"})
		testutil.Success(t, err)
		defer st.Close()
		_, err = st.Answer(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "requests", fake.Requests(), 2)
	})
}

// The defaults match the server's: it has no request timeout unless the
// network sets one, and its heartbeat is off, so a MINIMAL turn is silent
// until its answer. A 20-minute silent turn must not be cut by the client
// (it was, by an idle timeout of 5 minutes and a turn timeout of 15).
// Issue #25.
func TestClient_defaultsLetASilentTurnRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{sleeper(20 * time.Minute)}})
		c := servePipe(t, fake, nil)
		start := time.Now()
		st, err := c.StreamingChat(t.Context(), "sleeper", &neurosan.ChatRequest{Text: "zz"})
		testutil.Success(t, err)
		defer st.Close()
		ans, err := st.Answer(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "answer", ans.Text, "awake")
		testutil.Equal(t, "waited", time.Since(start), 20*time.Minute)
	})
}

// Issue #17: a Recorder whose Write never returns does not stall a
// request or a stream, and Close gives up on the writer after
// jsonl.CloseStall, with a warning, rather than hang.
func TestClient_stuckRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := testutil.NewStuckWriter()
		t.Cleanup(w.Release)
		var logs testutil.Logs
		fake := newFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
		c := servePipe(t, fake, &neurosan.Options{Recorder: w, Logger: logs.Logger()})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		testutil.Success(t, c.Connect(ctx))
		st, err := c.StreamingChat(ctx, "games/quest_designer", &neurosan.ChatRequest{Text: "hello"})
		testutil.Success(t, err)
		ans, err := st.Answer(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "an answer came", ans.Text != "", true)
		st.Close()
		start := time.Now()
		testutil.Success(t, c.Close())
		if d := time.Since(start); d != jsonl.CloseStall {
			t.Errorf("Close returned after %v, want %v", d, jsonl.CloseStall)
		}
		warned := false
		for _, r := range logs.Records(slog.LevelWarn) {
			err, _ := testutil.Attr(r, "err").(error)
			warned = warned || err != nil && strings.Contains(err.Error(), "lines not written")
		}
		testutil.Equal(t, "stalled recorder warned", warned, true)
	})
}
