package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// blockAgent blocks until the connection ends, signalling when it starts.
func blockAgent(started chan<- struct{}) xtytest.Agent {
	return func(ctx context.Context, turn *xtytest.Turn) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}
}

// Pending calls fail with a typed error when the Harness goes away, and
// the client reconnects with back-off and a fresh hello.
func TestClient_DisconnectAndReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{}, 1)
		e := newEnv(t, &xtytest.Options{Agent: blockAgent(started)}, nil, nil)
		e.drain()
		errc := make(chan error, 1)
		go func() {
			_, err := e.c.Chat(context.Background(), "wait", nil)
			errc <- err
		}()
		<-started
		dropped := time.Now()
		e.h.Disconnect()
		err := <-errc
		testutil.ErrorIs(t, err, xty.ErrDisconnected)
		var de *xty.DisconnectError
		testutil.ErrorAs(t, err, &de)
		testutil.Equal(t, "close code", de.Code, 1001)
		testutil.Equal(t, "close reason", de.Reason, "gateway shutting down")

		testutil.Equal(t, "disconnected event", e.next().Kind, xty.EventDisconnected)
		_, err = e.c.Chat(context.Background(), "now?", nil)
		testutil.ErrorIs(t, err, xty.ErrDisconnected)

		testutil.Equal(t, "reconnected", e.next(xty.EventReady).Kind, xty.EventConnected)
		testutil.Equal(t, "back-off", time.Since(dropped), 2*time.Second)
		hellos := 0
		for _, m := range e.h.Received() {
			if m.Method == "adapter.hello" {
				hellos++
			}
		}
		testutil.Equal(t, "hellos", hellos, 2)
	})
}

// Back-off doubles while the Harness is down, up to ReconnectMax. The
// first failed attempt of the outage is logged as a warning, the others
// at debug level (until issue #21 each was an EventError).
func TestClient_ReconnectBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.Logs
		opts := baseOptions()
		opts.ReconnectMin = time.Second
		opts.ReconnectMax = 4 * time.Second
		opts.Logger = logs.Logger()
		e := newEnv(t, nil, opts, nil)
		e.drain()
		down := time.Now()
		e.h.Close() // no new connections: every attempt fails
		testutil.Equal(t, "disconnected", e.next().Kind, xty.EventDisconnected)
		time.Sleep(16 * time.Second)
		synctest.Wait()
		var at []time.Duration
		var levels []slog.Level
		for _, r := range logs.Records(slog.LevelDebug) {
			testutil.ErrorIs(t, testutil.Attr(r, "err").(error), xty.ErrDisconnected)
			at = append(at, r.Time.Sub(down))
			levels = append(levels, r.Level)
		}
		testutil.Equal(t, "attempt times", at, []time.Duration{1 * time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second, 15 * time.Second})
		testutil.Equal(t, "one warning per outage", levels, []slog.Level{slog.LevelWarn, slog.LevelDebug, slog.LevelDebug, slog.LevelDebug, slog.LevelDebug})
		testutil.Equal(t, "no event per attempt", len(e.drain()), 0)
	})
}

func TestClient_Close(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{}, 1)
		e := newEnv(t, &xtytest.Options{Agent: blockAgent(started)}, nil, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := e.c.Chat(context.Background(), "wait", nil)
			errc <- err
		}()
		<-started
		testutil.Success(t, e.c.Close())
		err := <-errc
		testutil.ErrorIs(t, err, xty.ErrDisconnected)
		testutil.ErrorIs(t, err, net.ErrClosed)
		for range e.c.Events() { // ends after Close, once the waiting events are received
		}
		_, err = e.c.Next(context.Background())
		testutil.ErrorIs(t, err, xty.ErrClosed)
		testutil.Success(t, e.c.Close())
		testutil.ErrorIs(t, e.c.Ping(context.Background()), net.ErrClosed)
		testutil.ErrorIs(t, e.c.Connect(context.Background()), net.ErrClosed)
		synctest.Wait()
		testutil.Equal(t, "harness saw the close", e.h.Connections(), 0)
	})
}

func TestClient_ConnectFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		opts := baseOptions()
		opts.HTTPClient = h.Client()
		h.Close()
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		testutil.ErrorIs(t, c.Connect(context.Background()), xty.ErrDisconnected)
	})
}

// A message over 1 MiB is refused before it is sent; the connection
// stays usable.
func TestClient_OversizeGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quiet := func(ctx context.Context, turn *xtytest.Turn) (string, error) { return "ok", nil }
		e := newEnv(t, &xtytest.Options{Agent: quiet}, nil, nil) // the fake dies on oversize, as the gateway
		big := strings.Repeat("x", xty.MaxMessageSize)
		_, err := e.c.Chat(context.Background(), big, nil)
		testutil.ErrorIs(t, err, xty.ErrMessageTooBig)
		err = e.c.UpdateState(context.Background(), map[string]string{"blob": big}, "")
		testutil.ErrorIs(t, err, xty.ErrMessageTooBig)
		err = e.c.Notify(context.Background(), "state.update", map[string]any{"observation": map[string]string{"blob": big}})
		testutil.ErrorIs(t, err, xty.ErrMessageTooBig)
		// Just under the limit goes through (the fake would crash otherwise).
		fit := strings.Repeat("y", xty.MaxMessageSize-100)
		_, err = e.c.Chat(context.Background(), fit, nil)
		testutil.Success(t, err)
		testutil.Success(t, e.c.Ping(context.Background()))
		testutil.Equal(t, "refusals recorded", strings.Count(e.recording(), "message too big"), 3)
	})
}

// The gateway limits nothing it sends: a reply over 1 MiB arrives whole
// (the old 1 MiB read limit closed the connection with 1009 and lost the
// chat; issue #20). A message over the 4 MiB default still closes the
// connection with 1009.
func TestClient_ReadLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("long ", 1<<18) // 1.25 MiB; its delta (text and delta) is 2.5 MiB
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			turn.Say(long)
			return long, nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		e.drain()
		rep, err := e.c.Chat(context.Background(), "tell me everything", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "1.25 MiB reply", rep.Text == long, true)
		done := only(e.drain(), xty.EventDone)
		testutil.Equal(t, "done event", len(done) == 1 && done[0].Text == long, true)

		frame := func(n int) []byte {
			return []byte(`{"jsonrpc":"2.0","method":"assistant.error","params":{"message":"` + strings.Repeat("z", n) + `"}}`)
		}
		const limit = 4 << 20
		fits := frame(limit - len(frame(0)))
		e.h.SendRaw(fits)
		ev := e.next()
		testutil.Equal(t, "4 MiB frame read", ev.Kind, xty.EventError)
		testutil.Equal(t, "message length", len(ev.Message), limit-len(frame(0)))
		e.h.SendRaw(frame(limit))
		ev = e.next()
		testutil.Equal(t, "kind", ev.Kind, xty.EventDisconnected)
		var de *xty.DisconnectError
		testutil.ErrorAs(t, ev.Err, &de)
		testutil.Equal(t, "code", de.Code, 1009)
	})
}

// Responses nobody waits for are dropped, never answered; malformed
// frames too.
func TestClient_UnknownResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.drain()
		before := len(e.h.Received())
		for _, raw := range []string{
			`{"jsonrpc":"2.0","id":999,"result":{}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"method must be a non-empty string"}}`,
			`{"jsonrpc":"2.0","id":"x","result":1}`,
			`[{"jsonrpc":"2.0","method":"assistant.error"}]`,
			`not json`,
			`{"jsonrpc":"1.0","method":"assistant.error","params":{"message":"old"}}`,
		} {
			e.h.SendRaw([]byte(raw))
		}
		synctest.Wait()
		testutil.Equal(t, "nothing sent back", len(e.h.Received()), before)
		testutil.Equal(t, "no events", len(e.drain()), 0)
		testutil.Equal(t, "unknown ids noted", strings.Count(e.recording(), "dropped: response with unknown id"), 3)
		testutil.Success(t, e.c.Ping(context.Background()))
	})
}

// gateway.ping waits behind a running chat in the real gateway (and in
// the fake, by default); the client's own call timeout fires and the late
// answer is dropped.
func TestClient_QueuedPingTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			time.Sleep(3 * time.Second)
			return "done", nil
		}
		opts := baseOptions()
		opts.CallTimeout = time.Second
		e := newEnv(t, &xtytest.Options{Agent: agent}, opts, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := e.c.Chat(context.Background(), "slow", nil)
			testutil.Success(t, err)
		}()
		synctest.Wait() // the chat is running
		start := time.Now()
		err := e.c.Ping(context.Background())
		testutil.ErrorIs(t, err, xty.ErrTimeout)
		testutil.Equal(t, "timed out after", time.Since(start), time.Second)
		<-done
		synctest.Wait()
		testutil.Equal(t, "late pong dropped", strings.Count(e.recording(), "dropped: response with unknown id"), 1)
	})
}

// A caller's context bounds the call without closing the connection.
func TestClient_CallerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			time.Sleep(time.Second)
			return "ok", nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := e.c.Chat(ctx, "hi", nil)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		testutil.Equal(t, "not our timeout", errors.Is(err, xty.ErrTimeout), false)
		rep, err := e.c.Chat(context.Background(), "again", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "ok")
	})
}

// Pings keep a healthy connection; a peer that stops answering pongs is
// dropped after PingInterval + PingTimeout.
func TestClient_PingLiveness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.PingInterval = 2 * time.Second
		opts.PingTimeout = time.Second
		e := newEnv(t, nil, opts, nil)
		e.drain()
		time.Sleep(time.Minute)
		testutil.Equal(t, "still connected", len(e.drain()), 0)
		testutil.Success(t, e.c.Ping(context.Background()))
	})
}

// The state heartbeat sends state.update notifications every interval.
func TestClient_StateHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		n := 0
		opts.State = func() (any, string) {
			n++
			return map[string]int{"day": n}, "save-1"
		}
		e := newEnv(t, nil, opts, nil)
		time.Sleep(31 * time.Second)
		var got []string
		for _, m := range e.h.Received() {
			if m.Method == "state.update" {
				testutil.Equal(t, "notification", m.Notification, true)
				got = append(got, string(m.Params))
			}
		}
		testutil.Equal(t, "updates", got, []string{
			`{"observation":{"day":1},"saveId":"save-1"}`,
			`{"observation":{"day":2},"saveId":"save-1"}`,
		})
		// The request form is answered.
		testutil.Success(t, e.c.UpdateState(context.Background(), json.RawMessage(`{"hp":3}`), ""))
	})
}

// SetSaveID reconnects at once (no back-off) so that the new hello
// carries the new save; a call pending on the old connection fails with
// ErrDisconnected.
func TestClient_SetSaveID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{}, 1)
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			if turn.Text != "wait" {
				return xtytest.Echo(ctx, turn)
			}
			return blockAgent(started)(ctx, turn)
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := e.c.Chat(context.Background(), "wait", nil)
			errc <- err
		}()
		<-started
		id := xty.SaveID("testgame", "slot-2")
		start := time.Now()
		testutil.Success(t, e.c.SetSaveID(context.Background(), id))
		testutil.Equal(t, "reconnected without back-off", time.Since(start), time.Duration(0))
		err := <-errc
		var de *xty.DisconnectError
		testutil.ErrorAs(t, err, &de)
		testutil.Equal(t, "pending call's reason", de.Reason, "save switched")
		var saves []any
		for _, m := range e.h.Received() {
			if m.Method == "adapter.hello" {
				saves = append(saves, decode[map[string]any](t, m.Params)["saveId"])
			}
		}
		testutil.Equal(t, "hello saves", saves, []any{nil, id})
		testutil.Success(t, e.c.Ping(context.Background()))
		var ve *xty.ValidationError
		testutil.ErrorAs(t, e.c.SetSaveID(context.Background(), "C:/Users/me/save"), &ve)
	})
}

// SetSaveID("") clears the save, as the Stardew adapter does when the
// player returns to the title screen: the client reconnects and the new
// hello carries no saveId. The same id twice reconnects once. Issue #20.
func TestClient_SetSaveIDClear(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.SaveID = xty.SaveID("", "123456")
		e := newEnv(t, nil, opts, nil)
		testutil.Success(t, e.c.SetSaveID(context.Background(), ""))
		testutil.Success(t, e.c.SetSaveID(context.Background(), "")) // unchanged: no reconnect
		testutil.Success(t, e.c.SetSaveID(context.Background(), opts.SaveID))
		testutil.Success(t, e.c.Ping(context.Background()))
		var saves []any
		for _, m := range e.h.Received() {
			if m.Method == "adapter.hello" {
				saves = append(saves, decode[map[string]any](t, m.Params)["saveId"])
			}
		}
		testutil.Equal(t, "hello saves", saves, []any{opts.SaveID, nil, opts.SaveID})
	})
}

// With a full event queue, events are dropped and counted, never blocking
// the reader (calls still complete).
func TestClient_EventQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.MaxEvents = 2
		e := newEnv(t, nil, opts, nil) // Ready and Connected fill the queue
		rep, err := e.c.Chat(context.Background(), "hi", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "You said: hi")
		testutil.Equal(t, "dropped", e.c.Dropped(), 4) // start, 2 deltas, done
		testutil.Equal(t, "noted", strings.Count(e.recording(), "dropped: event queue full"), 4)
	})
}

// Each call waits its method's default timeout: ChatTimeout for chat.send,
// chat.retry and assistant.compose (through Chat or Call), CallTimeout
// for the others. Requests queue behind the blocked chat in the Harness,
// so none is answered.
func TestClient_CallTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.ChatTimeout = 7 * time.Second
		opts.CallTimeout = 3 * time.Second
		block := func(ctx context.Context, _ *xtytest.Turn) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}
		e := newEnv(t, &xtytest.Options{Agent: block}, opts, nil)
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			call func() error
			want time.Duration
		}{
			{"Chat", func() error { _, err := e.c.Chat(ctx, "wait", nil); return err }, 7 * time.Second},
			{"Compose", func() error { _, err := e.c.Compose(ctx, "wait", nil); return err }, 7 * time.Second},
			{"Call chat.retry", func() error { return e.c.Call(ctx, "chat.retry", nil, nil) }, 7 * time.Second},
			{"UpdateState", func() error { return e.c.UpdateState(ctx, map[string]int{}, "") }, 3 * time.Second},
			{"Call state.update", func() error {
				return e.c.Call(ctx, "state.update", map[string]any{"observation": map[string]int{}}, nil)
			}, 3 * time.Second},
		} {
			start := time.Now()
			testutil.ErrorIs(t, tc.call(), xty.ErrTimeout)
			testutil.Equal(t, tc.name+" timed out after", time.Since(start), tc.want)
		}
	})
}

// downTransport refuses every connection while down is set, and dials
// the fake Harness otherwise.
type downTransport struct {
	down atomic.Bool
	next http.RoundTripper
}

func (d *downTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.down.Load() {
		return nil, errors.New("connection refused")
	}
	return d.next.RoundTrip(r)
}

// After a successful reconnect the back-off starts again from
// ReconnectMin, however long the Harness was down before.
func TestClient_ReconnectBackoffReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		tr := &downTransport{next: h.Client().Transport}
		opts := baseOptions()
		opts.HTTPClient = &http.Client{Transport: tr}
		opts.ReconnectMin = time.Second
		opts.ReconnectMax = 8 * time.Second
		var logs testutil.Logs
		opts.Logger = logs.Logger()
		c, err := xty.New(opts)
		testutil.Success(t, err)
		defer c.Close()
		testutil.Success(t, c.Connect(context.Background()))
		e := &env{t: t, h: h, c: c}
		e.drain()

		tr.down.Store(true)
		h.Disconnect()
		testutil.Equal(t, "dropped", e.next(xty.EventReady).Kind, xty.EventDisconnected)
		time.Sleep(8 * time.Second) // refused at 1 s, 3 s, 7 s; the next attempt waits 8 s
		synctest.Wait()
		testutil.Equal(t, "refused attempts", len(logs.Records(slog.LevelDebug)), 3)
		tr.down.Store(false)
		testutil.Equal(t, "back", e.next(xty.EventReady).Kind, xty.EventConnected)

		dropped := time.Now()
		h.Disconnect()
		testutil.Equal(t, "dropped again", e.next(xty.EventReady).Kind, xty.EventDisconnected)
		testutil.Equal(t, "reconnected", e.next(xty.EventReady).Kind, xty.EventConnected)
		testutil.Equal(t, "back-off reset", time.Since(dropped), time.Second)
	})
}
