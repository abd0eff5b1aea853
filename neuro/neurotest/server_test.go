package neurotest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// rawClient drives the fake with raw messages.
type rawClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	c, _, err := websocket.Dial(context.Background(), s.URL, &websocket.DialOptions{HTTPClient: s.Client()})
	testutil.Success(t, err)
	t.Cleanup(func() { c.CloseNow() })
	synctest.Wait() // the server serves the connection
	return &rawClient{t: t, c: c}
}

func (r *rawClient) send(s string) {
	r.t.Helper()
	testutil.Success(r.t, r.c.Write(context.Background(), websocket.MessageText, []byte(s)))
}

func (r *rawClient) recv() map[string]any {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, b, err := r.c.Read(ctx)
	testutil.Success(r.t, err)
	var m map[string]any
	testutil.Success(r.t, json.Unmarshal(b, &m))
	return m
}

const regAB = `{"command":"actions/register","game":"G","data":{"actions":[{"name":"a","description":"A"},{"name":"b","description":"B","schema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"]}}]}}`

func TestServer_strict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{Seed: 1})
		defer s.Close()
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		ack := r.recv()
		testutil.Equal(t, "ack", ack["command"], any("startup"))
		r.send(regAB)
		r.send(`{"command":"actions/register","game":"G","data":{"actions":[{"name":"a","description":"changed"}]}}`)
		synctest.Wait()
		testutil.Equal(t, "first wins", strings.Join(s.Actions(), ","), "a,b")
		r.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["b","zz"]}}`)
		start := time.Now()
		act := r.recv()
		testutil.Equal(t, "delay", time.Since(start), 500*time.Millisecond)
		d := act["data"].(map[string]any)
		testutil.Equal(t, "name", d["name"], any("b"))
		var args struct{ N int }
		testutil.Success(t, json.Unmarshal([]byte(d["data"].(string)), &args))
		if args.N < 1 || args.N > 3 {
			t.Errorf("fake data %v off schema", d["data"])
		}
		r.send(`{"command":"context","game":"G","data":{"message":"held","silent":true}}`)
		synctest.Wait()
		testutil.Equal(t, "held", len(s.Contexts()), 0)
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + d["id"].(string) + `","success":false,"message":"again"}}`)
		retry := r.recv()
		testutil.Equal(t, "retry name", retry["data"].(map[string]any)["name"], any("b"))
		testutil.Equal(t, "context released", len(s.Contexts()), 1)
		// No result: after 20 s the action counts as failed, no retry.
		time.Sleep(20 * time.Second)
		synctest.Wait()
		_, pending := s.Pending()
		testutil.Equal(t, "pending after timeout", pending, false)
		testutil.Equal(t, "force over", s.Forcing(), false)
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + retry["data"].(map[string]any)["id"].(string) + `","success":true}}`)
		synctest.Wait()
		rs := s.Results()
		testutil.Equal(t, "late dropped", rs[len(rs)-1].Late, true)
		// startup clears the actions.
		r.send(`{"command":"startup","game":"G"}`)
		r.recv()
		testutil.Equal(t, "cleared", len(s.Actions()), 0)
		keys := map[string]bool{}
		for _, f := range s.Findings() {
			keys[f.Key] = true
		}
		for _, k := range []string{"prot/v1/register/conflict", "prot/force/some_invalid", "perf/timeout/action_result", "prot/startup/multiple"} {
			if !keys[k] {
				t.Errorf("finding %s missing: %v", k, s.Findings())
			}
		}
	})
}

func TestServer_randy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{Mode: Randy, Seed: 2})
		defer s.Close()
		r := dialRaw(t, s)
		testutil.Equal(t, "reregister on connect", r.recv()["command"], any("actions/reregister_all"))
		r.send(`{"command":"startup","game":"G"}`)
		r.send(regAB)
		r.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`)
		r.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["b"]}}`)
		first := r.recv()["data"].(map[string]any)
		testutil.Equal(t, "first", first["name"], any("a"))
		_, hasData := first["data"]
		testutil.Equal(t, "no data key without schema", hasData, false)
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + first["id"].(string) + `","success":false}}`)
		again := r.recv()["data"].(map[string]any)
		testutil.Equal(t, "same action retried", again["name"], any("a"))
		if again["id"] == first["id"] {
			t.Error("retry reused the id")
		}
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + again["id"].(string) + `","success":true}}`)
		second := r.recv()["data"].(map[string]any)
		testutil.Equal(t, "queued force next", second["name"], any("b"))
		r.send(`{"command":"startup","game":"G"}`)
		synctest.Wait()
		testutil.Equal(t, "randy never clears", len(s.Actions()), 2)
		// (No startup ack either: the first message after startup was the action.)
		testutil.Equal(t, "startups received", len(slices.DeleteFunc(s.Commands(), func(c string) bool { return c != "startup" })), 2)
	})
}

func TestServer_slowClientDisconnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{NoAck: true})
		defer s.Close()
		dialRaw(t, s) // and never read
		for i := 0; i < 400; i++ {
			s.SpeechFinished(true, false, "")
		}
		synctest.Wait()
		testutil.Equal(t, "dropped", s.Connections(), 0)
	})
}

// Test_fakeData checks generated data against the schema with an
// independent validator, for many seeds.
func Test_fakeData(t *testing.T) {
	t.Parallel()
	schemas := []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"]}`,
		`{"type":"object","properties":{"c":{"enum":["x","y"]},"s":{"type":"string","minLength":2,"maxLength":4},"b":{"type":"boolean"},"f":{"type":"number","minimum":0,"maximum":1}},"required":["c","s"]}`,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":1,"maxItems":4}},"required":["l"]}`,
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, raw := range schemas {
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(raw))
		c := jsonschema.NewCompiler()
		testutil.Success(t, c.AddResource("s.json", doc))
		sch, err := c.Compile("s.json")
		testutil.Success(t, err)
		for i := 0; i < 200; i++ {
			d, ok := fakeData(json.RawMessage(raw), rng)
			testutil.Equal(t, "has data", ok, true)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(d))
			testutil.Success(t, err)
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("fake data %s does not match %s: %v", d, raw, err)
			}
		}
	}
	_, ok := fakeData(nil, rng)
	testutil.Equal(t, "no schema no data", ok, false)
}

func TestServer_unforced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{Unforced: 3 * time.Second, NoAck: true})
		defer s.Close()
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		r.send(regAB)
		start := time.Now()
		act := r.recv()["data"].(map[string]any)
		testutil.Equal(t, "after", time.Since(start), 3*time.Second)
		// No second action while the first awaits its result.
		time.Sleep(10 * time.Second)
		synctest.Wait()
		id, ok := s.Pending()
		testutil.Equal(t, "still pending", ok, true)
		testutil.Equal(t, "same id", id, act["id"].(string))
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + id + `","success":true}}`)
		next := r.recv()["data"].(map[string]any)
		if next["id"] == act["id"] {
			t.Error("id reused")
		}
	})
}

// reentrantBuffer records and calls back into the server on each write.
type reentrantBuffer struct {
	mu sync.Mutex
	s  atomic.Pointer[Server]
	b  strings.Builder
}

func (w *reentrantBuffer) Write(p []byte) (int, error) {
	if s := w.s.Load(); s != nil {
		s.Connections() // deadlocks if called under s.mu
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestServer_recorder: both directions are recorded, outside the lock.
func TestServer_recorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &reentrantBuffer{}
		s := NewServer(&Options{Recorder: w})
		w.s.Store(s)
		defer s.Close()
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		r.recv()
		synctest.Wait()
		w.mu.Lock()
		defer w.mu.Unlock()
		lines := strings.Split(strings.TrimSpace(w.b.String()), "\n")
		testutil.Equal(t, "lines", len(lines), 2)
		if !strings.Contains(lines[0], `"in"`) || !strings.Contains(lines[0], `"startup"`) ||
			!strings.Contains(lines[1], `"out"`) || !strings.Contains(lines[1], `"sessionId"`) {
			t.Errorf("recording:\n%s", w.b.String())
		}
	})
}

// TestServer_strictForceWaitsForPendingResult: a force that arrives while
// an unforced action awaits its result is answered once the result comes.
func TestServer_strictForceWaitsForPendingResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{Seed: 1, NoAck: true})
		defer s.Close()
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		r.send(regAB)
		synctest.Wait()
		id := s.Act("a")
		r.recv()
		r.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`)
		time.Sleep(time.Second)
		synctest.Wait()
		if got, _ := s.Pending(); got != id {
			t.Fatalf("pending %q, want the unforced %q (no forced action while a result is pending)", got, id)
		}
		r.send(`{"command":"action/result","game":"G","data":{"id":"` + id + `","success":true}}`)
		start := time.Now()
		act := r.recv()
		testutil.Equal(t, "forced action after the delay", time.Since(start), 500*time.Millisecond)
		testutil.Equal(t, "name", act["data"].(map[string]any)["name"], any("a"))
	})
}

// TestServer_restart: a restarted server is a fresh one at the same
// address: the old connection is gone, messages still in flight on it are
// not seen, ids count from "0" again and nothing registered survives, in
// both modes. Issue #19.
func TestServer_restart(t *testing.T) {
	for _, mode := range []Mode{Strict, Randy} {
		t.Run(map[Mode]string{Strict: "strict", Randy: "randy"}[mode], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(&Options{Mode: mode, Seed: 1, NoAck: true})
				defer s.Close()
				r := dialRaw(t, s)
				if mode == Randy {
					r.recv() // reregister_all
				}
				r.send(`{"command":"startup","game":"G"}`)
				r.send(regAB)
				r.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`)
				testutil.Equal(t, "first id", r.recv()["data"].(map[string]any)["id"], any("0"))
				s.mu.Lock()
				old := s.conns[0]
				s.mu.Unlock()
				s.Restart()
				// A message of the old connection still being read when
				// the process died is never seen.
				s.receive(old, []byte(`{"command":"actions/register","game":"G","data":{"actions":[{"name":"z","description":"Z"}]}}`))
				synctest.Wait()
				testutil.Equal(t, "connected", s.Connections(), 0)
				testutil.Equal(t, "actions", len(s.Actions()), 0)
				testutil.Equal(t, "received", len(s.Received()), 0)
				testutil.Equal(t, "connects", s.Connects(), 0)
				_, pending := s.Pending()
				testutil.Equal(t, "pending", pending, false)
				testutil.Equal(t, "forcing", s.Forcing(), false)

				r2 := dialRaw(t, s)
				if mode == Randy {
					testutil.Equal(t, "reregister on connect", r2.recv()["command"], any("actions/reregister_all"))
				}
				r2.send(`{"command":"startup","game":"G"}`)
				r2.send(regAB)
				r2.send(`{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`)
				testutil.Equal(t, "ids from 0 again", r2.recv()["data"].(map[string]any)["id"], any("0"))
				testutil.Equal(t, "actions", strings.Join(s.Actions(), ","), "a,b")
				testutil.Equal(t, "connects", s.Connects(), 1)
			})
		})
	}
}

// The server has httptest's lifecycle: an unstarted server refuses
// connections, as a Neuro server not running yet does; Start serves; Start
// again panics; SetDown refuses while it lasts; Close is idempotent and
// refuses again. Issue #21.
func TestServer_lifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewUnstartedServer(nil)
		defer s.Close()
		dial := func() error {
			c, _, err := websocket.Dial(context.Background(), s.URL, &websocket.DialOptions{HTTPClient: s.Client()})
			if err == nil {
				c.CloseNow()
			}
			return err
		}
		testutil.Error(t, dial())
		s.Start()
		testutil.Success(t, dial())
		func() {
			defer func() { testutil.Equal(t, "second Start panics", recover() != nil, true) }()
			s.Start()
		}()
		s.SetDown(true)
		testutil.Error(t, dial())
		s.SetDown(false)
		testutil.Success(t, dial())
		s.Close()
		s.Close()
		testutil.Error(t, dial())
	})
}

// Options.Addr serves on a loopback port too; a non-loopback address is
// refused.
func TestServer_addr(t *testing.T) {
	func() {
		defer func() { testutil.Equal(t, "0.0.0.0 refused", recover() != nil, true) }()
		NewServer(&Options{Addr: "0.0.0.0:0"})
	}()
	s := NewServer(&Options{Addr: "127.0.0.1:0", NoAck: true})
	defer s.Close()
	testutil.Equal(t, "real address", strings.HasPrefix(s.URL, "ws://127.0.0.1:") && s.URL != "ws://127.0.0.1:0", true)
	c, _, err := websocket.Dial(context.Background(), s.URL, nil)
	testutil.Success(t, err)
	defer c.CloseNow()
	testutil.Success(t, c.Write(context.Background(), websocket.MessageText, []byte(`{"command":"startup","game":"G"}`)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	testutil.Success(t, s.Wait(ctx, func() bool { return len(s.Commands()) == 1 }))
}

// Issue #17: a Recorder whose Write never returns does not stall the
// fake: it still answers startup, and Close gives up on the writer after
// jsonl.CloseStall rather than hang.
func TestServer_stuckRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := testutil.NewStuckWriter()
		t.Cleanup(w.Release)
		s := NewServer(&Options{Recorder: w})
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		testutil.Equal(t, "startup acked", strings.Contains(jsonString(t, r.recv()), "sessionId"), true)
		start := time.Now()
		s.Close()
		if d := time.Since(start); d != jsonl.CloseStall {
			t.Errorf("Close returned after %v, want %v", d, jsonl.CloseStall)
		}
	})
}

func jsonString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	testutil.Success(t, err)
	return string(b)
}

// TestServer_ackWithoutDisplayName: an Ack with an empty DisplayName is
// sent without the key. Issue #33 item 1.
func TestServer_ackWithoutDisplayName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Options{Ack: &neuro.StartupAck{SessionID: "s1", CharacterID: "neuro"}})
		defer s.Close()
		r := dialRaw(t, s)
		r.send(`{"command":"startup","game":"G"}`)
		testutil.Equal(t, "ack", jsonString(t, r.recv()), `{"command":"startup","data":{"session":{"characterId":"neuro","sessionId":"s1"}}}`)
	})
}
