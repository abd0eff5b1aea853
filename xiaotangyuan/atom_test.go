package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

func TestClient_HandleAtomNames(t *testing.T) {
	t.Parallel()
	c, err := xty.New(baseOptions())
	testutil.Success(t, err)
	defer c.Close()
	fn := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"dst.find_nearest_butterfly", true},
		{"abc", true},
		{"0a-b", true},
		{"ab", false},                     // too short
		{"Dst.find", false},               // upper case
		{"_abc", false},                   // must start with [a-z0-9]
		{"abc def", false},                // space
		{strings.Repeat("a", 80), true},   // 80 characters
		{strings.Repeat("a", 81), false},  // 81 characters
		{"assistant.text-stream!", false}, // '!'
		{"assistant.open_door", false},    // never callable (issue #20)
		{"speech.say", false},             // never callable (issue #20)
		{"assistants.open_door", true},
	} {
		err := c.HandleAtom(tc.name, fn)
		if tc.ok {
			testutil.Success(t, err)
			continue
		}
		var ve *xty.ValidationError
		testutil.ErrorAs(t, err, &ve)
	}
	testutil.Error(t, c.HandleAtom("valid.name", nil))
}

// The gateway drops assistant.* and speech.* names from the atoms a skill
// may call, so an atom so named could never be called: HandleAtom refuses
// it, saying why. Even sent in the hello, the fake never calls it, as the
// gateway. Issue #20.
func TestClient_HandleAtomReserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			_, err := turn.CallAtom(ctx, "assistant.open_door", nil)
			return err.Error(), nil
		}
		opts := baseOptions()
		opts.Capabilities = []string{"assistant.open_door"} // a feature name to the gateway
		e := newEnv(t, &xtytest.Options{Agent: agent}, opts, func(c *xty.Client) {
			fn := func(context.Context, json.RawMessage) (any, error) { return "opened", nil }
			for _, name := range []string{"assistant.open_door", "speech.say"} {
				err := c.HandleAtom(name, fn)
				var ve *xty.ValidationError
				testutil.ErrorAs(t, err, &ve)
				testutil.Equal(t, "reason", strings.Contains(ve.Reason, "never calls"), true)
			}
		})
		rep, err := e.c.Chat(context.Background(), "open", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "not callable", rep.Text, "游戏未声明原子能力：assistant.open_door")
	})
}

// The Harness calls atoms while the adapter's chat.send is pending; two
// atoms run at once (each waits for the other to start).
func TestClient_AtomsDuringChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			var wg sync.WaitGroup
			results := make([]string, 2)
			for i, atom := range []string{"game.find", "game.scan"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := turn.CallAtom(ctx, atom, map[string]any{"radius": 20})
					if err != nil {
						results[i] = "error: " + err.Error()
						return
					}
					results[i] = string(res)
				}()
			}
			wg.Wait()
			_, err := turn.CallAtom(ctx, "game.fail", nil)
			return strings.Join(results, " ") + " | " + err.Error(), nil
		}
		var both sync.WaitGroup
		both.Add(2)
		handler := func(name string) xty.AtomFunc {
			return func(ctx context.Context, args json.RawMessage) (any, error) {
				both.Done()
				both.Wait() // returns only when both atoms are running
				var a struct{ Radius int }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				dl, _ := ctx.Deadline()
				return map[string]any{"atom": name, "radius": a.Radius, "budget": time.Until(dl).String()}, nil
			}
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			testutil.Success(t, c.HandleAtom("game.find", handler("find")))
			testutil.Success(t, c.HandleAtom("game.scan", handler("scan")))
			testutil.Success(t, c.HandleAtom("game.fail", func(ctx context.Context, _ json.RawMessage) (any, error) {
				return nil, errors.New("no butterfly nearby")
			}))
		})
		rep, err := e.c.Chat(context.Background(), "hunt", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text,
			`{"atom":"find","budget":"15s","radius":20} {"atom":"scan","budget":"15s","radius":20} | no butterfly nearby`)
		testutil.Equal(t, "failure code", strings.Contains(e.recording(), `"code":-32010`), true)
	})
}

// A handler that outlives the 15 s budget: the Harness fails the step with
// its timeout text, and the client does not send the late result (the
// gateway would answer it with -32700).
func TestClient_AtomTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			_, err := turn.CallAtom(ctx, "game.slow", nil)
			return err.Error(), nil
		}
		var elapsed time.Duration
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			c.HandleAtom("game.slow", func(ctx context.Context, _ json.RawMessage) (any, error) {
				start := time.Now()
				<-ctx.Done()
				elapsed = time.Since(start)
				return "too late", nil
			})
		})
		rep, err := e.c.Chat(context.Background(), "go", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "harness timeout text", rep.Text, "游戏原子能力超时：game.slow")
		synctest.Wait()
		testutil.Equal(t, "handler budget", elapsed, 15*time.Second)
		testutil.Equal(t, "late result not sent", strings.Contains(e.recording(), "not sent: atom game.slow"), true)
		for _, m := range e.h.Received() {
			if m.Method == "" {
				t.Fatalf("a response reached the Harness: %s", m.Raw)
			}
		}
	})
}

// Only declared atoms can be called; an undeclared one fails in the
// Harness without reaching the game.
func TestClient_AtomNotDeclared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			_, err := turn.CallAtom(ctx, "game.secret", nil)
			return err.Error(), nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		rep, err := e.c.Chat(context.Background(), "go", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "游戏未声明原子能力：game.secret")
	})
}

// The client answers requests it does not know, or with bad params, and
// refuses atoms beyond its concurrency bound at once.
func TestClient_ServeBadRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.MaxInFlight = 1
		release := make(chan struct{})
		e := newEnv(t, nil, opts, func(c *xty.Client) {
			c.HandleAtom("game.block", func(ctx context.Context, _ json.RawMessage) (any, error) {
				<-release
				return true, nil
			})
			c.HandleAtom("game.echo", func(ctx context.Context, args json.RawMessage) (any, error) {
				return string(args), nil
			})
		})
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"a","method":"game.unknown","params":{}}`))
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"b","method":"game.atom.execute","params":[1]}`))
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"c","method":"game.atom.execute","params":{"atom":"game.nope","arguments":{}}}`))
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"d","method":"game.atom.execute","params":{"atom":"game.block","arguments":{}}}`))
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"e","method":"game.atom.execute","params":{"atom":"game.block","arguments":{}}}`))
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"f","method":"game.atom.execute","params":{"atom":"game.block","arguments":[1]}}`))
		synctest.Wait()
		close(release)
		synctest.Wait()
		// The slot is free again; absent arguments reach the handler as {}.
		e.h.SendRaw([]byte(`{"jsonrpc":"2.0","id":"g","method":"game.atom.execute","params":{"atom":"game.echo"}}`))
		synctest.Wait()
		want := map[string]string{
			`"a"`: `"code":-32601`,
			`"b"`: `"code":-32602`,
			`"c"`: `unknown atom: game.nope`,
			`"d"`: `"result":true`,
			`"e"`: `adapter busy`,
			`"f"`: `"code":-32602,"message":"atom game.block: arguments must be a JSON object"`,
			`"g"`: `"result":"{}"`,
		}
		got := map[string]string{}
		for _, m := range e.h.Received() {
			if m.Method == "" {
				got[string(m.ID)] = string(m.Raw)
			}
		}
		t.Logf("answers: %q\n%s", got, e.recording())
		for id, frag := range want {
			testutil.Equal(t, "answer "+id+" contains "+frag, strings.Contains(got[id], frag), true)
		}
	})
}

// A skill threads one atom's result into the next call's arguments. The
// gateway checks its limits (50 items, strings of 500, nesting 8) on the
// stored program, before the results are filled in, so the arguments it
// sends can exceed them; the handler gets them as sent. Issue #20.
func TestClient_AtomArgumentsFromResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			found, err := turn.CallAtom(ctx, "game.find", map[string]any{"radius": 20})
			if err != nil {
				return "", err
			}
			var r struct{ Items, Deep any }
			if err := json.Unmarshal(found, &r); err != nil {
				return "", err
			}
			// {"items": "$found.items", "deep": "$found.deep"}, filled in.
			got, err := turn.CallAtom(ctx, "game.collect", map[string]any{"items": r.Items, "deep": r.Deep})
			if err != nil {
				return "refused: " + err.Error(), nil
			}
			return string(got), nil
		}
		deep := any("bottom")
		for range 12 {
			deep = map[string]any{"d": deep}
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			testutil.Success(t, c.HandleAtom("game.find", func(context.Context, json.RawMessage) (any, error) {
				items := make([]string, 60)
				for i := range items {
					items[i] = strings.Repeat("i", 600)
				}
				return map[string]any{"items": items, "deep": deep}, nil
			}))
			testutil.Success(t, c.HandleAtom("game.collect", func(_ context.Context, args json.RawMessage) (any, error) {
				var a struct {
					Items []string
					Deep  json.RawMessage
				}
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				return fmt.Sprintf("%d items of %d, %d levels", len(a.Items), len(a.Items[0]), strings.Count(string(a.Deep), "{")), nil
			}))
		})
		rep, err := e.c.Chat(context.Background(), "hunt", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, `"60 items of 600, 12 levels"`)
	})
}

// The recorder writes a Harness request before anything it causes: the
// atom's answer comes after game.atom.execute in the log, and the chat's
// result is the last line, even with a writer that dawdles over every
// incoming line. Issue #20. (The recording is asynchronous since issue
// #17, so the log is read after Close, which writes what waits; the
// order of the lines is the order in which the client recorded them.)
func TestClient_RecorderOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			res, err := turn.CallAtom(ctx, "game.look", nil)
			if err != nil {
				return "", err
			}
			return string(res), nil
		}
		log := &slowLog{stall: `"dir":"in"`}
		opts := baseOptions()
		opts.Recorder = log
		e := newEnv(t, &xtytest.Options{Agent: agent}, opts, func(c *xty.Client) {
			testutil.Success(t, c.HandleAtom("game.look", func(context.Context, json.RawMessage) (any, error) {
				return "looked", nil
			}))
		})
		e.rec = &log.buf
		rep, err := e.c.Chat(context.Background(), "look", nil)
		testutil.Success(t, err)
		testutil.Success(t, e.c.Close())
		lines := strings.Split(strings.TrimSpace(log.buf.String()), "\n")
		request, answer := -1, -1
		for i, l := range lines {
			switch {
			case strings.Contains(l, `"method":"game.atom.execute"`):
				request = i
			case strings.Contains(l, `"dir":"out"`) && strings.Contains(l, `"result":"looked"`):
				answer = i
			}
		}
		if request < 0 || answer < request {
			t.Errorf("the atom's request (line %d) is not logged before its answer (line %d):\n%s", request, answer, log.buf.String())
		}
		last := lines[len(lines)-1]
		testutil.Equal(t, "the result is the last line", strings.Contains(last, rep.InteractionID+`"`) &&
			(strings.Contains(last, `"result":{"interactionId"`) || strings.Contains(last, `"reply"`)), true)
	})
}

// A result too big for one message fails the step at once with
// CodeAtomFailed, rather than being refused by the size guard and leaving
// the Harness to time out after 15 s.
func TestClient_AtomResultTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			start := time.Now()
			_, err := turn.CallAtom(ctx, "game.dump", nil)
			return fmt.Sprintf("%v after %v", err, time.Since(start)), nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			testutil.Success(t, c.HandleAtom("game.dump", func(context.Context, json.RawMessage) (any, error) {
				return strings.Repeat("d", xty.MaxMessageSize), nil
			}))
		})
		rep, err := e.c.Chat(context.Background(), "dump", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "step failure", rep.Text,
			fmt.Sprintf("atom game.dump: result is %d bytes, over the 1 MiB message limit after 0s", xty.MaxMessageSize+2))
		testutil.Equal(t, "code", strings.Contains(e.recording(), `"code":-32010`), true)
	})
}

// Close cancels a running atom handler's context at once (not at its 15 s
// deadline) and waits for the handler to return.
func TestClient_AtomCancelledByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			_, err := turn.CallAtom(ctx, "game.wait", nil)
			return "", err
		}
		started := make(chan struct{})
		var handlerErr error
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, func(c *xty.Client) {
			c.HandleAtom("game.wait", func(ctx context.Context, _ json.RawMessage) (any, error) {
				close(started)
				<-ctx.Done()
				handlerErr = ctx.Err()
				return nil, ctx.Err()
			})
		})
		go e.c.Chat(context.Background(), "go", nil)
		<-started
		start := time.Now()
		testutil.Success(t, e.c.Close())
		testutil.ErrorIs(t, handlerErr, context.Canceled) // set before Close returned
		testutil.Equal(t, "Close took", time.Since(start), time.Duration(0))
	})
}

// atomFlood is a Harness that, once the hello is answered, sends its
// game.atom.execute calls as fast as the client reads them, reading
// nothing until read is closed; then it counts the answers by id.
type atomFlood struct {
	calls [][]byte
	read  chan struct{}

	mu      sync.Mutex // guards following
	answers map[string]int
	busy    int
}

func newAtomFlood(calls, idBytes int) *atomFlood {
	f := &atomFlood{read: make(chan struct{}), answers: make(map[string]int)}
	for i := range calls {
		f.calls = append(f.calls, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"%0*d","method":"game.atom.execute","params":{"atom":"game.noop","arguments":{}}}`, idBytes, i))
	}
	return f
}

func (f *atomFlood) serve(ctx context.Context, t *testing.T, ws *websocket.Conn, hello []byte) {
	acceptHello(ctx, t, ws, hello)
	go func() {
		for _, b := range f.calls {
			if ws.Write(ctx, websocket.MessageText, b) != nil {
				return
			}
		}
	}()
	<-f.read
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var a struct {
			ID    string
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Errorf("answer %.100s: %v", b, err)
		}
		f.mu.Lock()
		f.answers[a.ID]++
		if a.Error != nil && strings.Contains(a.Error.Message, "adapter busy") {
			f.busy++
		}
		f.mu.Unlock()
	}
}

// Every game.atom.execute gets exactly one answer, however many come at
// once: past MaxInFlight they are answered "adapter busy", and when the
// queue of those answers is full (64 of them, or 1 MiB) the reader waits
// for room rather than drop one, so a Harness that does not read is
// throttled instead. Before, a gateway sending 5,000 calls got no answer
// for 3,365 of them. Issue #34.
func TestClient_AtomFlood(t *testing.T) {
	for _, tc := range []struct {
		name           string
		calls, idBytes int
		maxRead        int // calls the client reads while the Harness reads nothing
	}{
		// 16 atoms hold their answers, 64 busy answers wait in the queue,
		// one is being written and one waits for room.
		{"5000 calls", 5000, 36, 16 + 64 + 2},
		// Ten answers of 100 KiB fill the queue's 1 MiB.
		{"ids of 100 KiB", 100, 100 << 10, 16 + 10 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newAtomFlood(tc.calls, tc.idBytes)
				rec := &testutil.SyncBuffer{}
				opts := baseOptions()
				opts.HTTPClient = rawHarness(t, func(ctx context.Context, ws *websocket.Conn, hello []byte) { f.serve(ctx, t, ws, hello) })
				opts.PingInterval = -1
				opts.Recorder = rec
				c, err := xty.New(opts)
				testutil.Success(t, err)
				defer c.Close()
				testutil.Success(t, c.HandleAtom("game.noop", func(context.Context, json.RawMessage) (any, error) { return true, nil }))
				testutil.Success(t, c.Connect(context.Background()))

				synctest.Wait() // everything blocked: the Harness reads nothing
				read := strings.Count(rec.String(), `"method":"game.atom.execute"`)
				t.Logf("read %d of %d calls while the Harness read nothing", read, tc.calls)
				if read > tc.maxRead {
					t.Errorf("the client read %d calls while the Harness read nothing, want at most %d", read, tc.maxRead)
				}
				close(f.read)
				synctest.Wait()
				f.mu.Lock()
				defer f.mu.Unlock()
				t.Logf("%d answers, %d busy", len(f.answers), f.busy)
				testutil.Equal(t, "calls answered", len(f.answers), tc.calls)
				for id, n := range f.answers {
					if n != 1 {
						t.Fatalf("call %.40s answered %d times", id, n)
					}
				}
			})
		})
	}
}
