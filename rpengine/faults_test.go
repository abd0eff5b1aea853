package rpengine_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// cardModes returns the card transfer modes of the reply.request and
// character.sync messages the engine received, in order.
func cardModes(eng *enginetest.Engine) []string {
	var modes []string
	for _, m := range eng.Received() {
		if m.Type != "reply.request" && m.Type != "character.sync" && m.Type != "voice.capture.start" {
			continue
		}
		var v struct {
			Card struct {
				Mode string `json:"mode"`
			} `json:"card"`
		}
		_ = json.Unmarshal(m.Raw, &v)
		modes = append(modes, v.Card.Mode)
	}
	return modes
}

func TestServer_supersession(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var events []string
		f := newServer(t, &rpengine.ServerOptions{OnSession: func(info rpengine.SessionInfo, ended bool) {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				events = append(events, "end "+info.ID)
			} else {
				events = append(events, "start "+info.ID)
			}
		}})
		eng1 := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 50 * time.Millisecond}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, textReq(testCard(t), "hello"))
		testutil.Success(t, err)
		if _, err := eng1.WaitType(ctx, "reply.request"); err != nil {
			t.Fatal(err)
		}
		// A socket that has not said hello does not disturb the live session.
		raw, _, err := f.dialRaw(ctx, rpengine.OriginProduction)
		testutil.Success(t, err)
		defer raw.CloseNow()
		info, _ := f.srv.Session()
		testutil.Equal(t, "still eng1", info.ID, eng1.SessionID())

		eng2 := f.dial(t, nil)
		<-eng1.Done()
		testutil.Equal(t, "old closed with 3000", eng1.CloseStatus(), websocket.StatusCode(3000))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrConnectionLost)
		mu.Lock()
		testutil.Equal(t, "session events", events, []string{"start " + eng1.SessionID(), "start " + eng2.SessionID()})
		mu.Unlock()
		// The new session starts with a snapshot again.
		r2, err := f.srv.Reply(ctx, textReq(testCard(t), "again"))
		testutil.Success(t, err)
		_, err = r2.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "modes", cardModes(eng2), []string{"snapshot"})
	})
}

func TestServer_maxHandshakes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, &rpengine.ServerOptions{MaxHandshakes: 2})
		eng := f.dial(t, nil)
		ctx := ctxT(t)
		for i := 0; i < 2; i++ {
			c, _, err := f.dialRaw(ctx, rpengine.OriginProduction)
			testutil.Success(t, err)
			defer c.CloseNow()
		}
		_, resp, err := f.dialRaw(ctx, rpengine.OriginProduction)
		testutil.Error(t, err)
		testutil.Equal(t, "status", resp.StatusCode, 503)
		info, _ := f.srv.Session()
		testutil.Equal(t, "live session untouched", info.ID, eng.SessionID())
		r, err := f.srv.Reply(ctx, textReq(testCard(t), "still fine"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
	})
}

func TestServer_reconnectMidReply(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 30 * time.Millisecond}})
		ctx := ctxT(t)
		c := testCard(t)
		r0, err := f.srv.Reply(ctx, textReq(c, "first"))
		testutil.Success(t, err)
		_, err = r0.Wait(ctx)
		testutil.Success(t, err)
		r, err := f.srv.Reply(ctx, textReq(c, "hello"))
		testutil.Success(t, err)
		if _, err := eng.WaitFor(ctx, func(m enginetest.Message) bool { return m.Type == "ack" }); err != nil {
			t.Fatal(err)
		}
		ev, err := r.Next(ctx) // mid-reply: the first text arrived
		testutil.Success(t, err)
		testutil.Equal(t, "first event", ev.Kind, rpengine.EventText)
		old := eng.SessionID()
		testutil.Success(t, eng.Reconnect(ctx))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrConnectionLost)
		waitSession(t, ctx, f.srv, func(info rpengine.SessionInfo) bool { return info.ID != old })
		eng.SetFaults(enginetest.Faults{})
		r2, err := f.srv.Reply(ctx, textReq(c, "again"))
		testutil.Success(t, err)
		res, err := r2.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: again")
		// first session: snapshot then reference; new session: snapshot again
		testutil.Equal(t, "modes", cardModes(eng), []string{"snapshot", "reference", "snapshot"})
	})
}

func TestServer_resync(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		next  string // card text change for the second request ("" = same card)
		modes []string
	}{
		{"reference unknown", "", []string{"snapshot", "reference", "snapshot"}},
		{"patch base lost", "A fox.", []string{"snapshot", "patch", "snapshot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newServer(t, nil)
				eng := f.dial(t, nil)
				ctx := ctxT(t)
				r, err := f.srv.Reply(ctx, textReq(testCard(t), "one"))
				testutil.Success(t, err)
				_, err = r.Wait(ctx)
				testutil.Success(t, err)
				eng.SetFaults(enginetest.Faults{ForceResync: 1})
				c2 := testCard(t)
				if tt.next != "" {
					c2 = testCard(t, tt.next, "A fox who talks.")
				}
				r2, err := f.srv.Reply(ctx, textReq(c2, "two"))
				testutil.Success(t, err)
				res, err := r2.Wait(ctx)
				testutil.Success(t, err)
				testutil.Equal(t, "modes", cardModes(eng), tt.modes)
				h, _ := eng.CardHash("game", "ari")
				testutil.Equal(t, "hash", res.CardHash.String(), h)
				// The retry kept requestId and eventId with a new messageId.
				var ids [][3]string
				for _, m := range eng.Received() {
					if m.Type == "reply.request" {
						var v struct{ RequestID, EventID string }
						_ = json.Unmarshal(m.Raw, &v)
						ids = append(ids, [3]string{v.RequestID, v.EventID, m.MessageID})
					}
				}
				testutil.Equal(t, "same ids", ids[1][0] == ids[2][0] && ids[1][1] == ids[2][1], true)
				testutil.Equal(t, "new messageId", ids[1][2] != ids[2][2], true)
			})
		})
	}
}

// numberCard holds numbers that RFC 8785 and upstream print differently.
const numberCardFrom, numberCardTo = `"extensions":{}}}`, `"extensions":{"weight":1.0,"big":1e21}}}`

func TestServer_upstreamHashRefusedSnapshot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{UpstreamHash: true}})
		ctx := ctxT(t)
		c := testCard(t, numberCardFrom, numberCardTo)
		for i := 0; i < 3; i++ {
			r, err := f.srv.Reply(ctx, textReq(c, "hi"))
			testutil.Success(t, err)
			if _, err := r.Wait(ctx); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		modes := cardModes(eng)
		if len(modes) > 6 {
			t.Fatalf("resync loop: %v", modes)
		}
		t.Logf("modes with upstream hashing: %v", modes)
		h, _ := eng.CardHash("game", "ari")
		want, err := enginetest.UpstreamHash([]byte(cardJSONWith(numberCardFrom, numberCardTo)))
		testutil.Success(t, err)
		testutil.Equal(t, "engine used the upstream hash", h, want)
	})
}

func TestServer_syncCharacter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, nil)
		ctx := ctxT(t)
		c := testCard(t)
		h, err := f.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		got, _ := eng.CardHash("game", "ari")
		testutil.Equal(t, "hash", h.String(), got)
		h2, err := f.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		testutil.Equal(t, "same hash", h2, h)
		c = testCard(t, "curious", "bold")
		h3, err := f.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		got, _ = eng.CardHash("game", "ari")
		testutil.Equal(t, "patched hash", h3.String(), got)
		testutil.Equal(t, "modes", cardModes(eng), []string{"snapshot", "reference", "patch"})
		// A forced resync of the sync is retried with a snapshot.
		eng.SetFaults(enginetest.Faults{ForceResync: 1})
		_, err = f.srv.SyncCharacter(ctx, "game", "ari", c)
		testutil.Success(t, err)
		testutil.Equal(t, "modes", cardModes(eng)[3:], []string{"reference", "snapshot"})
		// An invalid card never leaves.
		c = testCard(t, `"name":"Ari"`, `"name":"  "`)
		_, err = f.srv.SyncCharacter(ctx, "game", "ari", c)
		var fe *rpengine.FieldError
		testutil.ErrorAs(t, err, &fe)
		testutil.Equal(t, "field", fe.Field, "Card")
	})
}

func TestServer_cancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Delay: 20 * time.Millisecond}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, textReq(testCard(t), "a long story"))
		testutil.Success(t, err)
		_, err = r.Next(ctx)
		testutil.Success(t, err)
		testutil.Success(t, r.Cancel(ctx))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrCancelled)
		testutil.Equal(t, "reason", err.Error(), "rpengine: reply cancelled: requested_by_game")

		// Cancellation racing completion: the reply completes, the late
		// not_active answer is dropped harmlessly.
		eng.SetFaults(enginetest.Faults{Delay: 20 * time.Millisecond, IgnoreCancel: true})
		r, err = f.srv.Reply(ctx, textReq(testCard(t), "race"))
		testutil.Success(t, err)
		_, err = r.Next(ctx)
		testutil.Success(t, err)
		testutil.Success(t, r.Cancel(ctx))
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "completed", res.Text, "I hear you. You said: race")
		f.log.waitFor(t, "for no pending request")
		// Cancel after the end sends nothing.
		testutil.Success(t, r.Cancel(ctx))
	})
}

func TestServer_duplicatesAndDroppedAcks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Duplicate: true, DropAcks: true}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, audioReq(testCard(t), "twice"))
		testutil.Success(t, err)
		segs := 0
		for ev := range r.Events() {
			if ev.Kind == rpengine.EventSegment {
				segs++
			}
			if ev.Kind == rpengine.EventAnomaly {
				t.Errorf("duplicates leaked into the stream: %+v", ev.Anomaly)
			}
		}
		testutil.Equal(t, "segments once", segs, 2)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text once", res.Text, "I hear you. You said: twice")
		testutil.Equal(t, "never acked", f.srv.MessageStatus(r.MessageID()), rpengine.MessagePending)
		f.log.waitFor(t, "duplicate engine message dropped")
		// The duplicate's ack may still be on its way to the engine when the
		// reply ends: wait for it (bounded by ctx) instead of reading
		// Received() once.
		_, err = eng.WaitFor(ctx, func(m enginetest.Message) bool {
			if m.Type != "ack" {
				return false
			}
			var a struct{ Duplicate bool }
			return json.Unmarshal(m.Raw, &a) == nil && a.Duplicate
		})
		if err != nil {
			t.Fatalf("the game did not ack duplicates as duplicates: %v", err)
		}
	})
}

func TestServer_engineErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, nil)
		ctx := ctxT(t)
		tests := []struct {
			code   string
			after  bool
			target error
		}{
			// Before reply.accepted, capacity_exceeded is retried (issue #15,
			// TestTransports_capacityRefusalRetried); after it, it ends the reply.
			{"capacity_exceeded", true, rpengine.ErrCapacityExceeded},
			{"service_not_started", false, rpengine.ErrServiceNotStarted},
			{"prompt_too_large", true, rpengine.ErrPromptTooLarge},
			{"unsupported_voice", true, rpengine.ErrUnsupportedVoice},
			// Issue #33: the codes that had no sentinel.
			{"request_failed", true, rpengine.ErrRequestFailed},
			{"stt_model_not_installed", true, rpengine.ErrSTTModelNotInstalled},
			{"unsupported_sample_rate", true, rpengine.ErrUnsupportedSampleRate},
			{"invalid_request", false, rpengine.ErrInvalidRequest},
			{"some_future_code", false, nil},
		}
		for _, tt := range tests {
			eng.SetFaults(enginetest.Faults{ErrorCode: tt.code, ErrorAfterAccept: tt.after})
			r, err := f.srv.Reply(ctx, textReq(testCard(t), "x"))
			testutil.Success(t, err)
			_, err = r.Wait(ctx)
			var re *rpengine.RequestError
			testutil.ErrorAs(t, err, &re)
			testutil.Equal(t, "code", re.Code, tt.code)
			testutil.Equal(t, "requestId", re.RequestID, r.RequestID())
			testutil.Equal(t, "retryable", re.Retryable, tt.code == "capacity_exceeded")
			if tt.target != nil {
				testutil.ErrorIs(t, err, tt.target)
			}
			if errors.Is(err, rpengine.ErrCardResyncRequired) {
				t.Fatal("wrong sentinel")
			}
		}
	})
}

func TestServer_disconnectAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		f.dial(t, &enginetest.Options{Faults: enginetest.Faults{DisconnectAfter: 5}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, audioReq(testCard(t), "cut"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrConnectionLost)
		evs := collect(t, r)
		testutil.ErrorIs(t, evs[len(evs)-1].Err, rpengine.ErrConnectionLost)
	})
}

func TestServer_voiceCapture(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, nil)
		ctx := ctxT(t)
		r, err := f.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: testCard(t),
			Transcript: true, KeepListening: true})
		testutil.Success(t, err)
		var kinds []rpengine.EventKind
		var states []string
		var transcript, text string
		for ev := range r.Events() {
			if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Kind {
				kinds = append(kinds, ev.Kind)
			}
			switch ev.Kind {
			case rpengine.EventCapture:
				if s := ev.Capture.State; len(states) == 0 || states[len(states)-1] != s {
					states = append(states, s)
				}
				transcript = ev.Capture.Transcript
			case rpengine.EventText:
				text = ev.Text
			}
		}
		testutil.Equal(t, "states", states, []string{"listening", "speech_started", "speech_ended"})
		testutil.Equal(t, "transcript", transcript, "Hello there.")
		testutil.Equal(t, "text", text, "I hear you. You said: Hello there.")
		testutil.Equal(t, "ends", kinds[len(kinds)-1], rpengine.EventEnd)
		m, err := eng.WaitType(ctx, "voice.capture.start")
		testutil.Success(t, err)
		testutil.Equal(t, "valid", m.Err, error(nil))

		// Cancel while listening sends voice.capture.cancel.
		eng.SetFaults(enginetest.Faults{Delay: 30 * time.Millisecond})
		r, err = f.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: testCard(t)})
		testutil.Success(t, err)
		ev, err := r.Next(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "listening", ev.Capture.State, "listening")
		testutil.Success(t, r.Cancel(ctx))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrCancelled)
		_, err = eng.WaitType(ctx, "voice.capture.cancel")
		testutil.Success(t, err)

		// Stop ends the recording early; the reply follows.
		r, err = f.srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: testCard(t)})
		testutil.Success(t, err)
		testutil.Success(t, r.Stop(ctx))
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
		_, err = eng.WaitType(ctx, "voice.capture.stop")
		testutil.Success(t, err)
		// Stop is for captures only.
		r, err = f.srv.Reply(ctx, textReq(testCard(t), "x"))
		testutil.Success(t, err)
		testutil.Error(t, r.Stop(ctx))
		_, _ = r.Wait(ctx)
	})
}

func TestServer_shutdownEndsRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Silent: true}})
		ctx := ctxT(t)
		r, err := f.srv.Reply(ctx, textReq(testCard(t), "x"))
		testutil.Success(t, err)
		testutil.Success(t, f.srv.Shutdown(ctx))
		_, err = r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrServerClosed)
		_, err = f.srv.Reply(ctx, textReq(testCard(t), "x"))
		testutil.ErrorIs(t, err, rpengine.ErrServerClosed)
	})
}

func TestServer_concurrentReplies(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newServer(t, nil)
		eng := f.dial(t, nil)
		ctx := ctxT(t)
		c := testCard(t)
		const n = 12
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := f.srv.Reply(ctx, textReq(c, "n"+string(rune('a'+i))))
				if err == nil {
					var res *rpengine.Result
					res, err = r.Wait(ctx)
					if err == nil && res.Text != "I hear you. You said: n"+string(rune('a'+i)) {
						err = errors.New("wrong text " + res.Text)
					}
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			testutil.Success(t, err)
		}
		for _, m := range eng.Received() {
			if m.Err != nil {
				t.Errorf("engine refused %s: %v", m.Type, m.Err)
			}
		}
		if u := f.srv.URL(); u != "https://rpengine.gemtavern.com/#port="+strconv.Itoa(f.port) {
			t.Errorf("URL %q", u)
		}
		testutil.Equal(t, "socket URL", f.srv.SocketURL(), f.url)
	})
}
