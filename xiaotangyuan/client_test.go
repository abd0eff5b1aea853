package xiaotangyuan_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

func TestClient_Hello(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.SaveID = xty.SaveID("testgame", "slot-1")
		e := newEnv(t, nil, opts, func(c *xty.Client) {
			noop := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
			testutil.Success(t, c.HandleAtom("game.open_door", noop))
			testutil.Success(t, c.HandleAtom("game.drop-item", noop))
		})
		ready := e.next()
		testutil.Equal(t, "first event", ready.Kind, xty.EventReady)
		testutil.Equal(t, "ready version", ready.ProtocolVersion, "1.1")
		testutil.Equal(t, "ready caps", contains(ready.Capabilities, "speech.barge-in"), true)
		testutil.Equal(t, "second event", e.next().Kind, xty.EventConnected)

		msgs := e.h.Received()
		testutil.Equal(t, "messages", len(msgs), 1)
		hello := msgs[0]
		testutil.Equal(t, "method", hello.Method, "adapter.hello")
		testutil.Equal(t, "hello is a request", hello.Notification, false)
		p := decode[map[string]any](t, hello.Params)
		testutil.Equal(t, "adapterId", p["adapterId"], any("test-adapter"))
		testutil.Equal(t, "gameId", p["gameId"], any("testgame"))
		testutil.Equal(t, "version", p["version"], any("0.1.0"))
		testutil.Equal(t, "protocolVersion", p["protocolVersion"], any("1.1"))
		testutil.Equal(t, "processId", p["processId"], any(float64(os.Getpid())))
		testutil.Equal(t, "saveId", p["saveId"], any(opts.SaveID))
		testutil.Equal(t, "capabilities", p["capabilities"], any([]any{"assistant.text-stream", "game.drop-item", "game.open_door"}))

		err := e.c.HandleAtom("game.late", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
		testutil.Error(t, err)
		testutil.Equal(t, "atom after connect", err.Error(), "xiaotangyuan: handle atom: atoms must be registered before Connect")
		err = e.c.Connect(context.Background())
		testutil.Equal(t, "second connect", err.Error(), "xiaotangyuan: connect: Connect already succeeded; the client reconnects by itself")
	})
}

func TestClient_ChatStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			turn.Say("Hel") // first delta: at once
			turn.Say("lo")  // within 80 ms: held
			time.Sleep(100 * time.Millisecond)
			turn.Say(" wor")                // 80 ms passed: "lo wor" goes out
			turn.Say("ld!")                 // ends a sentence: at once
			turn.Say(" Bye")                // held, flushed at the end
			return "Hello world! Bye.", nil // the authoritative text differs
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		rep, err := e.c.Chat(context.Background(), "  hi  ", &xty.ChatContext{PlayerName: "Wilson", Location: "forest"})
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "Hello world! Bye.")
		testutil.Equal(t, "session prefix", strings.HasPrefix(rep.SessionID, "game-testgame-"), true)
		testutil.Equal(t, "cancelled", rep.Cancelled, false)

		evs := only(e.drain(), xty.EventStart, xty.EventText, xty.EventDone)
		testutil.Equal(t, "kinds", kinds(evs), []xty.EventKind{xty.EventStart, xty.EventText, xty.EventText, xty.EventText, xty.EventText, xty.EventDone})
		var texts, deltas []string
		for _, ev := range evs {
			testutil.Equal(t, "interaction id", ev.InteractionID, rep.InteractionID)
			if ev.Kind == xty.EventText {
				texts = append(texts, ev.Text)
				deltas = append(deltas, ev.Delta)
				testutil.Equal(t, "step reset", ev.StepReset, false)
				testutil.Equal(t, "source", ev.Source, xty.SourceChat)
			}
		}
		testutil.Equal(t, "texts replace", texts, []string{"Hel", "Hello wor", "Hello world!", "Hello world! Bye"})
		testutil.Equal(t, "deltas", deltas, []string{"Hel", "lo wor", "ld!", " Bye"})
		testutil.Equal(t, "elapsed of second delta", evs[2].Elapsed, 100*time.Millisecond)
		testutil.Equal(t, "done is authoritative", evs[5].Text, "Hello world! Bye.")

		sent := e.h.Received()[1]
		testutil.Equal(t, "method", sent.Method, "chat.send")
		p := decode[map[string]any](t, sent.Params)
		testutil.Equal(t, "trimmed text", p["text"], any("hi"))
		testutil.Equal(t, "context", p["context"], any(map[string]any{"playerName": "Wilson", "location": "forest"}))
	})
}

func TestClient_StepReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			turn.Say("Checking the map... ")
			turn.Say("hm")
			turn.Step() // tool call: pending flushed, text restarts
			time.Sleep(100 * time.Millisecond)
			turn.Say("Foun")
			return "Found it.", nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		_, err := e.c.Chat(context.Background(), "where?", nil)
		testutil.Success(t, err)
		var texts []string
		var resets []bool
		for _, ev := range only(e.drain(), xty.EventText) {
			texts = append(texts, ev.Text)
			resets = append(resets, ev.StepReset)
		}
		testutil.Equal(t, "texts", texts, []string{"Checking the map... ", "Checking the map... hm", "Foun"})
		testutil.Equal(t, "resets", resets, []bool{false, false, true})
	})
}

// The client declares assistant.text-stream, so the gateway never sends
// it the legacy assistant.delta: each delta arrives once. (Issue #20: this
// test used a fake quirk that sent legacy duplicates anyway, which the
// gateway never does; the Assembler tests cover duplicates.)
func TestClient_NoLegacyDeltas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		_, err := e.c.Chat(context.Background(), "ping", nil)
		testutil.Success(t, err)
		texts := only(e.drain(), xty.EventText)
		// Echo emits "You said: " at once and the rest at the final flush.
		testutil.Equal(t, "one event per delta", len(texts), 2)
		testutil.Equal(t, "deltas on the wire", strings.Count(e.recording(), `"method":"assistant.text.delta"`), 2)
		testutil.Equal(t, "no legacy frames", strings.Count(e.recording(), `"method":"assistant.delta"`), 0)
	})
}

func TestClient_Retry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		_, err := e.c.Retry(context.Background(), nil)
		var rpcErr *xty.RPCError
		testutil.ErrorAs(t, err, &rpcErr)
		testutil.Equal(t, "code", rpcErr.Code, xty.CodeServer)
		_, err = e.c.Chat(context.Background(), "again", nil)
		testutil.Success(t, err)
		e.drain()
		rep, err := e.c.Retry(context.Background(), nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "You said: again")
		evs := only(e.drain(), xty.EventStart, xty.EventText, xty.EventDone, xty.EventPresent)
		testutil.Equal(t, "kinds", kinds(evs), []xty.EventKind{xty.EventStart, xty.EventText, xty.EventText, xty.EventDone, xty.EventPresent})
		for _, ev := range evs {
			testutil.Equal(t, "source", ev.Source, xty.SourceRetry)
		}
	})
}

func TestClient_Compose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.drain()
		rep, err := e.c.Compose(context.Background(), "danger: flooding", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "You said: danger: flooding")
		synctest.Wait()
		testutil.Equal(t, "no stream events", len(e.drain()), 0)
	})
}

func TestClient_BargeInDuringChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			turn.Say("Hello")
			turn.BargeIn()
			turn.Say(" there") // held; the final flush re-sends text.start for this id
			return "Hello there", nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		e.drain()
		rep, err := e.c.Chat(context.Background(), "talk", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply still returned", rep.Text, "Hello there")
		testutil.Equal(t, "cancelled", rep.Cancelled, true)
		evs := e.drain()
		testutil.Equal(t, "kinds", kinds(evs), []xty.EventKind{xty.EventStart, xty.EventText, xty.EventCancel, xty.EventStatus})
		testutil.Equal(t, "reason", evs[2].Reason, "barge-in")
		testutil.Equal(t, "status", evs[3].Status, xty.StatusRecording)
		// The late start, delta and done were on the wire and dropped.
		testutil.Equal(t, "late start on the wire", strings.Count(e.recording(), `"method":"assistant.text.start"`), 2)
		testutil.Equal(t, "late events dropped", strings.Count(e.recording(), "dropped: duplicate or after done/cancel"), 3)
	})
}

func TestClient_Proactive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.drain()
		e.h.Proactive("You look hungry.")
		present := e.next()
		done := e.next()
		testutil.Equal(t, "present", present.Kind, xty.EventPresent)
		testutil.Equal(t, "present source", present.Source, xty.SourceProactive)
		testutil.Equal(t, "present text", present.Text, "You look hungry.")
		testutil.Equal(t, "done without start", done.Kind, xty.EventDone)
		testutil.Equal(t, "done text", done.Text, "You look hungry.")
		testutil.Equal(t, "done source", done.Source, xty.SourceProactive)
	})
}

func TestClient_StatusAndError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.drain()
		e.h.Status("thinking", "what is that")
		e.h.Error("TTS failed")
		st := e.next()
		testutil.Equal(t, "status", st.Status, xty.StatusThinking)
		testutil.Equal(t, "transcript", st.Transcript, "what is that")
		er := e.next()
		testutil.Equal(t, "error kind", er.Kind, xty.EventError)
		testutil.Equal(t, "message", er.Message, "TTS failed")
	})
}

func TestClient_Voice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &xtytest.Options{Transcript: "where is the base"}, nil, nil)
		e.drain()
		testutil.Success(t, e.c.StartVoice(context.Background()))
		testutil.Success(t, e.c.StopVoice(context.Background()))
		var evs []xty.Event
		for len(evs) == 0 || evs[len(evs)-1].Kind != xty.EventDone {
			evs = append(evs, e.next())
		}
		testutil.Equal(t, "kinds", kinds(evs), []xty.EventKind{
			xty.EventCancel, xty.EventStatus, xty.EventStatus, xty.EventStatus,
			xty.EventStart, xty.EventText, xty.EventText, xty.EventPresent, xty.EventDone,
		})
		testutil.Equal(t, "recording", evs[1].Status, xty.StatusRecording)
		testutil.Equal(t, "thinking", evs[2].Transcript, "")
		testutil.Equal(t, "final transcript", evs[3].Transcript, "where is the base")
		testutil.Equal(t, "present", evs[7].Source, xty.SourceVoice)
		testutil.Equal(t, "done", evs[8].Text, "You said: where is the base")
	})
}

func TestClient_VoiceNeedsProcessID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := baseOptions()
		opts.ProcessID = -1
		e := newEnv(t, nil, opts, nil)
		testutil.ErrorIs(t, e.c.StartVoice(context.Background()), xty.ErrNoProcessID)
		testutil.ErrorIs(t, e.c.StopVoice(context.Background()), xty.ErrNoProcessID)
		testutil.Equal(t, "nothing sent after hello", len(e.h.Received()), 1)
		_, has := decode[map[string]any](t, e.h.Received()[0].Params)["processId"]
		testutil.Equal(t, "no processId", has, false)
	})
}

func TestClient_Errors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			if turn.Text == "fail" {
				return "", errors.New("模型调用失败")
			}
			return "", nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		var rpcErr *xty.RPCError
		_, err := e.c.Chat(context.Background(), "fail", nil)
		testutil.ErrorAs(t, err, &rpcErr)
		testutil.Equal(t, "error", *rpcErr, xty.RPCError{Method: "chat.send", Code: xty.CodeServer, Message: "模型调用失败"})
		_, err = e.c.Chat(context.Background(), "empty", nil)
		testutil.ErrorAs(t, err, &rpcErr)
		testutil.Equal(t, "message", rpcErr.Message, "model returned no text reply")
		err = e.c.Call(context.Background(), "no.such", nil, nil)
		testutil.ErrorAs(t, err, &rpcErr)
		testutil.Equal(t, "unknown method", rpcErr.Message, "unknown method: no.such")
	})
}

// Events are received one way, as in every client of the module: Next
// waits (bounded by its ctx), Poll takes what waits without waiting, and
// an Events loop ends once the client is closed. Issue #21.
func TestClient_Receive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		testutil.Equal(t, "polled", kinds(e.c.Poll(nil)), []xty.EventKind{xty.EventReady, xty.EventConnected})
		testutil.Equal(t, "nothing left", len(e.c.Poll(nil)), 0)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := e.c.Next(ctx)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		var got []xty.EventKind
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ev := range e.c.Events() {
				got = append(got, ev.Kind)
			}
		}()
		e.h.Status("recording", "")
		synctest.Wait()
		testutil.Success(t, e.c.Close())
		<-done
		testutil.Equal(t, "loop saw", got, []xty.EventKind{xty.EventStatus, xty.EventDisconnected})
	})
}

// redirectingHarness is an HTTP client whose transport records the
// address of every dial: a dial to the Harness's default address reaches
// an in-memory server that answers the upgrade with a 307 to location;
// any other address is refused, so the test never reaches the network.
func redirectingHarness(location string) (*http.Client, func() []string) {
	var mu sync.Mutex
	var dials []string
	dial := func(ctx context.Context, _, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, addr)
		mu.Unlock()
		if addr != "127.0.0.1:32145" {
			return nil, errors.New("refused by the test: " + addr)
		}
		srv, cli := net.Pipe()
		go func() {
			defer srv.Close()
			if _, err := http.ReadRequest(bufio.NewReader(srv)); err == nil {
				io.WriteString(srv, "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+location+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}
		}()
		return cli, nil
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	return hc, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dials...)
	}
}

// The handshake follows no redirect, wherever it points: the Harness never
// redirects, and a local process that answers the upgrade with one must
// not make the client dial a host its URL rules refuse. Issue #34.
func TestClient_HandshakeRedirect(t *testing.T) {
	t.Parallel()
	for _, location := range []string{"http://192.0.2.1:32145/", "ws://127.0.0.1:32146/"} {
		t.Run(location, func(t *testing.T) {
			t.Parallel()
			hc, dials := redirectingHarness(location)
			opts := baseOptions()
			opts.HTTPClient = hc
			c, err := xty.New(opts)
			testutil.Success(t, err)
			defer c.Close()
			err = c.Connect(context.Background())
			t.Log(err)
			testutil.ErrorIs(t, err, xty.ErrDisconnected)
			testutil.Equal(t, "dials", dials(), []string{"127.0.0.1:32145"})
			testutil.Equal(t, "error names the redirect", strings.Contains(err.Error(), "redirect"), true)
		})
	}
}
