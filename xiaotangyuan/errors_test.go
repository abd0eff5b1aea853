package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// Every error says once where it came from: the package prefix once,
// then the operation once, then the cause. Issue #20: 10 of 18 error
// texts repeated their prefix ("xiaotangyuan: chat.send: xiaotangyuan:
// chat.send: harness error -32000: ...").
func TestErrors_SayWhereOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := map[string]error{}
		ctx := context.Background()

		_, err := xty.New(&xty.Options{})
		got["new"] = err
		idle, err := xty.New(baseOptions())
		testutil.Success(t, err)
		_, got["not connected"] = idle.Chat(ctx, "hi", nil)
		h := xtytest.NewServer(nil)
		opts := baseOptions()
		opts.HTTPClient = h.Client()
		h.Close()
		down, err := xty.New(opts)
		testutil.Success(t, err)
		got["connect refused"] = down.Connect(ctx)
		down.Close()
		idle.Close()

		hung := baseOptions()
		hung.HTTPClient = hungHarness(t, func([]byte) bool { return false })
		silent, err := xty.New(hung)
		testutil.Success(t, err)
		got["hello timeout"] = silent.Connect(ctx)
		silent.Close()

		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			switch turn.Text {
			case "fail":
				return "", errors.New("boom")
			case "slow":
				time.Sleep(3 * time.Second)
			case "wait":
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "ok", nil
		}
		var logs testutil.Logs
		copts := baseOptions()
		copts.Logger = logs.Logger()
		copts.CallTimeout = time.Second
		copts.ProcessID = -1
		copts.State = func() (any, string) { return map[string]int{}, "bad id!" }
		copts.StateInterval = time.Second
		e := newEnv(t, &xtytest.Options{Agent: agent}, copts, nil)
		c := e.c
		_, got["retry first"] = c.Retry(ctx, nil)
		_, got["blank"] = c.Chat(ctx, " ", nil)
		_, got["harness"] = c.Chat(ctx, "fail", nil)
		got["unknown method"] = c.Call(ctx, "no.such", nil, nil)
		_, got["too large"] = c.Chat(ctx, strings.Repeat("x", xty.MaxMessageSize), nil)
		got["atom after connect"] = c.HandleAtom("game.late", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
		got["connect twice"] = c.Connect(ctx)
		got["save id"] = c.SetSaveID(ctx, "a/b")
		got["state"] = c.UpdateState(ctx, []int{1}, "")
		got["voice"] = c.StartVoice(ctx)
		time.Sleep(time.Second)
		synctest.Wait()
		warnings := logs.Records(slog.LevelWarn)
		testutil.Equal(t, "heartbeat warning", len(warnings) > 0, true)
		got["heartbeat log"], _ = testutil.Attr(warnings[0], "err").(error)
		go c.Chat(ctx, "slow", nil)
		synctest.Wait()
		got["timeout"] = c.Ping(ctx)
		time.Sleep(3 * time.Second)
		errc := make(chan error)
		go func() {
			_, err := c.Chat(ctx, "wait", nil)
			errc <- err
		}()
		synctest.Wait()
		e.h.Disconnect()
		got["dropped"] = <-errc
		ev := e.next(xty.EventReady, xty.EventConnected, xty.EventStart, xty.EventText, xty.EventDone)
		testutil.Equal(t, "disconnected", ev.Kind, xty.EventDisconnected)
		got["disconnected event"] = ev.Err
		c.Close()
		got["closed"] = c.Ping(ctx)

		for name, err := range got {
			if err == nil {
				t.Errorf("%s: no error", name)
				continue
			}
			s := err.Error()
			t.Logf("%-18s %s", name, s)
			if !strings.HasPrefix(s, "xiaotangyuan: ") || strings.Count(s, "xiaotangyuan") != 1 {
				t.Errorf("%s: the prefix is not said exactly once: %s", name, s)
			}
			seen := map[string]bool{}
			for _, part := range strings.Split(s, ": ") {
				if seen[part] {
					t.Errorf("%s: %q is said twice: %s", name, part, s)
				}
				seen[part] = true
			}
		}
		for name, want := range map[string]string{
			"harness":            "xiaotangyuan: chat.send: harness error -32000: boom",
			"unknown method":     "xiaotangyuan: call no.such: harness error -32000: unknown method: no.such",
			"timeout":            "xiaotangyuan: gateway.ping: call timed out after 1s",
			"atom after connect": "xiaotangyuan: handle atom: atoms must be registered before Connect",
			"blank":              "xiaotangyuan: chat.send: invalid text: must not be blank",
			"hello timeout":      "xiaotangyuan: connect: adapter.hello: call timed out after 5s",
			"new":                "xiaotangyuan: option AdapterID: must not be empty",
			"heartbeat log":      "xiaotangyuan: state heartbeat: invalid saveId: \"bad id!\" must be 1-128 characters of [A-Za-z0-9._:-]",
		} {
			testutil.Equal(t, name, got[name].Error(), want)
		}
		testutil.ErrorIs(t, got["timeout"], xty.ErrTimeout)
		testutil.ErrorIs(t, got["hello timeout"], xty.ErrTimeout)
		testutil.ErrorIs(t, got["too large"], xty.ErrMessageTooBig)
		testutil.Equal(t, "too large", strings.HasPrefix(got["too large"].Error(), "xiaotangyuan: chat.send: message too big: 1048"), true)
		testutil.ErrorIs(t, got["closed"], xty.ErrClosed)
		var re *xty.RPCError
		testutil.ErrorAs(t, got["harness"], &re)
		testutil.Equal(t, "method kept", re.Method, "chat.send")
	})
}
