package rpengine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

func TestSession_welcome(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{ServerVersion: "game/1.2"})
	acks := u.ft.messages("ack")
	testutil.Equal(t, "hello acked", acks[0]["acknowledgedMessageId"], any("hello-1"))
	_, hasSession := acks[0]["sessionId"]
	testutil.Equal(t, "ack of hello has no session", hasSession, false)
	w := u.ft.messages("welcome")
	testutil.Equal(t, "one welcome", len(w), 1)
	testutil.Equal(t, "session", w[0]["sessionId"], any(u.c.info.ID))
	testutil.Equal(t, "version", w[0]["serverVersion"], any("game/1.2"))
	testutil.Equal(t, "envelope session", w[0]["sessionId"], w[0]["sessionId"])
	// The ack must come before welcome.
	testutil.Equal(t, "order", strings.Contains(string(u.ft.sent[0]), `"type":"ack"`), true)
}

func TestSession_acksAndDuplicates(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	b, _ := wire.Encode("capacity.update", "cap-1", "", time.Now(), map[string]any{"queueDepth": 1, "queueLimit": 20, "acceptingRequests": true})
	u.recv(b)
	b2, _ := wire.Encode("capacity.update", "cap-1", "", time.Now(), map[string]any{"queueDepth": 9, "queueLimit": 20, "acceptingRequests": false})
	u.recv(b2)
	c, _ := u.srv.Capacity()
	testutil.Equal(t, "duplicate not processed", c, session.Capacity{QueueDepth: 1, QueueLimit: 20, AcceptingRequests: true, Known: true})
	acks := u.ft.messages("ack")
	testutil.Equal(t, "acks", len(acks), 3) // hello + 2
	testutil.Equal(t, "first not duplicate", acks[1]["duplicate"], nil)
	testutil.Equal(t, "second duplicate", acks[2]["duplicate"], any(true))
	// An ack is never acked.
	u.in("ack", map[string]any{"acknowledgedMessageId": "nothing"})
	testutil.Equal(t, "no ack of ack", len(u.ft.messages("ack")), 3)
}

func TestSession_disableAcks(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{DisableAcks: true})
	u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	testutil.Equal(t, "no acks", len(u.ft.messages("ack")), 0)
}

func TestSession_dedupWindowPerSession(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{DedupWindow: 2})
	for _, id := range []string{"a", "b", "a", "c", "a"} {
		b, _ := wire.Encode("x.unknown", id, "", time.Now(), nil)
		u.recv(b)
	}
	var dups []any
	for _, a := range u.ft.messages("ack")[1:] {
		dups = append(dups, a["duplicate"])
	}
	// window 2: a b [a dup] c (evicts a) [a new]
	testutil.Equal(t, "duplicates", dups, []any{nil, nil, true, nil, nil})
}

func TestSession_ackTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 15 * time.Second})
		ctx := context.Background()
		r := u.reply(ctx)
		testutil.Equal(t, "pending", u.srv.MessageStatus(r.MessageID()), MessagePending)
		time.Sleep(14 * time.Second)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("ended before the timeout")
		default:
		}
		time.Sleep(2 * time.Second)
		_, err := r.Wait(ctx)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		testutil.Equal(t, "unacked", u.srv.MessageStatus(r.MessageID()), MessageUnacked)
	})
}

func TestSession_ackedRequestDoesNotTimeOut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: time.Second, IdleTimeout: -1})
		r := u.reply(context.Background())
		u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
		testutil.Equal(t, "acked", u.srv.MessageStatus(r.MessageID()), MessageAcked)
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("acked request ended")
		default:
		}
		u.end(ErrConnectionLost)
		_, err := r.Wait(context.Background())
		testutil.ErrorIs(t, err, ErrConnectionLost)
	})
}

func TestSession_idleTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{IdleTimeout: time.Minute})
		ctx := context.Background()
		r := u.reply(ctx)
		u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
		u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 1})
		// Queued: any engine message (here capacity.update) keeps it
		// waiting, however long the queue takes.
		for i := 0; i < 12; i++ {
			time.Sleep(50 * time.Second)
			u.in("capacity.update", map[string]any{"queueDepth": 1, "queueLimit": 20, "acceptingRequests": true})
		}
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("queued reply timed out")
		default:
		}
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hel"})
		time.Sleep(59 * time.Second)
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 1, "delta": "lo"})
		time.Sleep(59 * time.Second)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("active reply timed out while messages flowed")
		default:
		}
		time.Sleep(2 * time.Second)
		_, err := r.Wait(ctx)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		synctest.Wait()
		testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
	})
}

// Issue #9: a reply the engine accepted (or only acked) and then never
// started, with the engine silent, waited forever.
func TestSession_idleTimeoutWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, accepted := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			u := newUnit(t, &ServerOptions{IdleTimeout: time.Minute, AckTimeout: -1})
			ctx := context.Background()
			r := u.reply(ctx)
			u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
			if accepted {
				u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 3})
			}
			time.Sleep(59 * time.Second)
			synctest.Wait()
			select {
			case <-r.Done():
				t.Fatal("timed out early")
			default:
			}
			time.Sleep(2 * time.Second)
			_, err := r.Wait(ctx)
			testutil.ErrorIs(t, err, ErrNoAnswer)
			synctest.Wait()
			testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
		})
	}
}

func TestSession_failFast(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{FailFast: true})
	u.in("capacity.update", map[string]any{"queueDepth": 20, "queueLimit": 20, "acceptingRequests": false})
	_, err := u.srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi"})
	testutil.ErrorIs(t, err, ErrBusy)
	u.end(ErrConnectionLost)
	_, err = u.srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi"})
	testutil.ErrorIs(t, err, ErrNotConnected)
}

func TestSession_invalidPayloadAttribution(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{AckTimeout: -1})
	ctx := context.Background()
	welcome := u.ft.messages("welcome")[0]["messageId"].(string)
	u.in("ack", map[string]any{"acknowledgedMessageId": welcome})
	r1 := u.reply(ctx)
	u.in("ack", map[string]any{"acknowledgedMessageId": r1.MessageID()})
	// Another character: r2 need not wait for r1's reply.accepted.
	r2 := u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "d", Card: u.card, Text: "again", RequestID: "r2"})
	u.in("request.error", map[string]any{"code": "invalid_payload", "message": "Missing RPEngine eventId."})
	_, err := r2.Wait(ctx)
	var re *RequestError
	testutil.ErrorAs(t, err, &re)
	testutil.ErrorIs(t, err, ErrInvalidPayload)
	testutil.Equal(t, "source", re.SourceMessageID, r2.MessageID())
	testutil.Equal(t, "request", re.RequestID, "r2")
	testutil.Equal(t, "rejected", u.srv.MessageStatus(r2.MessageID()), MessageRejected)
	select {
	case <-r1.Done():
		t.Fatal("the acked request was failed")
	default:
	}
}

func TestSession_slowConsumer(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{MaxPendingAudio: 2 * time.Second})
	ctx := context.Background()
	r := u.reply(ctx)
	u.in("reply.audio.start", map[string]any{"requestId": "r1", "format": "pcm_s16le", "sampleRate": 44100, "channels": 1})
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 2*11025)) // 0.25 s
	for i := 0; i < 12; i++ {
		u.in("reply.audio.chunk", map[string]any{"requestId": "r1", "sequence": i, "segmentSequence": i,
			"segmentChunkSequence": 0, "segmentChunkCount": 1, "data": pcm})
	}
	_, err := r.Wait(ctx)
	testutil.ErrorIs(t, err, ErrSlowConsumer)
	testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
	// The events held stay bounded and end with the error.
	var segs int
	var last Event
	for ev := range r.Events() {
		if ev.Kind == EventSegment {
			segs++
		}
		last = ev
	}
	testutil.Equal(t, "segments kept", segs, 8)
	testutil.ErrorIs(t, last.Err, ErrSlowConsumer)
}

func TestSession_textCoalesces(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	for i := 0; i < 5000; i++ {
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": i, "delta": "a"})
	}
	ev, err := r.Next(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "kind", ev.Kind, EventText)
	testutil.Equal(t, "latest text", len(ev.Text), 5000)
	testutil.Equal(t, "nothing else queued", queued(r), 0)
}

func TestSession_endFailsEverything(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := u.srv.SyncCharacter(ctx, "g", "d", u.card)
		done <- err
	}()
	u.ft.wait(t, "character.sync", 1)
	u.end(ErrConnectionLost)
	_, err := r.Wait(ctx)
	testutil.ErrorIs(t, err, ErrConnectionLost)
	testutil.ErrorIs(t, <-done, ErrConnectionLost)
	<-u.c.Done()
	_, live := u.srv.Session()
	testutil.Equal(t, "detached", live, false)
}

// Issue #4: duplicate detection is per session; a new session starts a
// fresh window.
func TestSession_dedupPerSession(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	b, _ := wire.Encode("x.unknown", "same-id", "", time.Now(), nil)
	u.recv(b)
	u.recv(b)
	ft2 := &fakeTransport{}
	sess2 := attachUnit(t, u.srv, ft2, "hello-2")
	testutil.Equal(t, "old transport closed with 3000", u.ft.closedCode(), 3000)
	sess2.Receive(session.Inbound{Msg: b})
	<-sess2.w.Drained()
	acks := ft2.messages("ack")
	testutil.Equal(t, "fresh window", acks[len(acks)-1]["duplicate"], nil)
	// The old session's messages are no longer processed.
	before := len(u.ft.messages("ack"))
	u.recv(b)
	testutil.Equal(t, "old session ignores", len(u.ft.messages("ack")), before)
}

// Issue #4: resynchronisation can never loop.
func TestSession_resyncNeverLoops(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	for i := 0; i < 10; i++ {
		select {
		case <-r.Done():
		default:
			u.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": r.MessageID(), "code": "card_resync_required", "message": "no", "retryable": true})
		}
	}
	_, err := r.Wait(ctx)
	testutil.Error(t, err)
	testutil.ErrorIs(t, err, ErrCardResyncRequired)
	sent := u.ft.messages("reply.request")
	if len(sent) > 1+maxResyncs {
		t.Fatalf("%d attempts", len(sent))
	}
	for _, m := range sent {
		testutil.Equal(t, "same requestId", m["requestId"], any("r1"))
	}
	t.Logf("ended after %d attempts: %v", len(sent), err)
}

func TestSession_engineCancelledConnectionLost(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	r := u.reply(context.Background())
	u.in("reply.cancelled", map[string]any{"requestId": "r1", "reason": "connection_lost"})
	_, err := r.Wait(context.Background())
	testutil.ErrorIs(t, err, ErrConnectionLost)
	testutil.ErrorIs(t, err, ErrCancelled)
}

func TestSession_syncNoAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 5 * time.Second})
		_, err := u.srv.SyncCharacter(context.Background(), "g", "c", u.card)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		u.end(ErrConnectionLost)
	})
}

// Issue #9: a character.sync the engine acked but never answered waited
// for ever when the caller's context had no deadline.
func TestSession_syncAckedNoAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 5 * time.Second, IdleTimeout: time.Minute})
		done := make(chan error, 1)
		go func() {
			_, err := u.srv.SyncCharacter(context.Background(), "g", "c", u.card)
			done <- err
		}()
		synctest.Wait()
		syncs := u.ft.messages("character.sync")
		testutil.Equal(t, "sent", len(syncs), 1)
		u.in("ack", map[string]any{"acknowledgedMessageId": syncs[0]["messageId"]})
		time.Sleep(59 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("ended early: %v", err)
		default:
		}
		time.Sleep(2 * time.Second)
		testutil.ErrorIs(t, <-done, ErrNoAnswer)
		u.end(ErrConnectionLost)
	})
}

// Issue #4: nothing but the ack of hello goes before welcome, even for a
// request that was waiting for the session.
func TestSession_welcomeFirst(t *testing.T) {
	t.Parallel()
	srv, err := NewServer(&ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	testutil.Success(t, err)
	defer srv.Close()
	c, _ := card.Parse([]byte(unitCard))
	got := make(chan *Reply, 1)
	go func() {
		r, _ := srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: c, Text: "hi"})
		got <- r
	}()
	ft := &fakeTransport{}
	sess := attachUnit(t, srv, ft, "h")
	// Reply returns at the engine's decision (issue #15): wait for the
	// request on the wire instead.
	ft.wait(t, "reply.request", 1)
	ft.mu.Lock()
	var types []string
	for _, b := range ft.sent {
		var m struct{ Type string }
		_ = json.Unmarshal(b, &m)
		types = append(types, m.Type)
	}
	ft.mu.Unlock()
	testutil.Equal(t, "order", types, []string{"ack", "welcome", "reply.request"})
	sess.End(ErrConnectionLost)
	if r := <-got; r == nil {
		t.Fatal("Reply returned no handle for a request that was sent")
	}
}

// Issue #15: the gate counts the requests sent that the last
// capacity.update does not show yet, until an update that follows their
// reply.accepted, or until they end.
func TestSession_capacityCountsInflight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, nil)
		ctx := context.Background()
		req := func(id, character string) ReplyRequest {
			return ReplyRequest{IntegrationID: "g", CharacterID: character, Card: u.card, Text: "hi", RequestID: id}
		}
		u.in("capacity.update", map[string]any{"queueDepth": 18, "queueLimit": 20, "acceptingRequests": true})
		u.request(ctx, req("r1", "a"))
		u.request(ctx, req("r2", "b"))
		got := make(chan error, 1)
		go func() {
			_, err := u.srv.Reply(ctx, req("r3", "c"))
			got <- err
		}()
		synctest.Wait()
		testutil.Equal(t, "18 + 2 in flight: r3 waits", len(u.ft.messages("reply.request")), 2)
		// r1 accepted; the update after it shows r1 (19), and r2 still counts.
		u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 19})
		u.in("capacity.update", map[string]any{"queueDepth": 19, "queueLimit": 20, "acceptingRequests": true})
		synctest.Wait()
		testutil.Equal(t, "19 + 1: r3 still waits", len(u.ft.messages("reply.request")), 2)
		// r2 ends before it was accepted: it no longer counts.
		u.in("request.error", map[string]any{"requestId": "r2", "sourceMessageId": "x", "code": "duplicate_request", "message": "no", "retryable": false})
		synctest.Wait()
		testutil.Equal(t, "19 + 0: r3 sent", len(u.ft.messages("reply.request")), 3)
		u.end(ErrConnectionLost)
		testutil.Success(t, <-got)
	})
}

// Issue #15: before the first capacity.update, upstream's limit of 20 is
// assumed.
func TestSession_capacityAssumedBeforeUpdate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, nil)
		ctx := context.Background()
		for i := range 20 {
			u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: fmt.Sprint("c", i), Card: u.card, Text: "hi", RequestID: fmt.Sprint("r", i)})
		}
		got := make(chan error, 1)
		go func() {
			_, err := u.srv.Reply(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "last"})
			got <- err
		}()
		synctest.Wait()
		testutil.Equal(t, "21st waits", len(u.ft.messages("reply.request")), 20)
		u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 30, "acceptingRequests": true})
		synctest.Wait()
		testutil.Equal(t, "sent once the engine says it has room", len(u.ft.messages("reply.request")), 21)
		u.end(ErrConnectionLost)
		testutil.Success(t, <-got)
	})
}

// Issue #16: voice.capture.* messages for a request that is not a voice
// capture were taken as the capture's (a state event, and speech_ended
// moved the request on to its reply phase). They are an anomaly now and
// change nothing: not the events, not the phase, not the answered flag
// that stops the ack timer.
func TestSession_captureEventsForAReply(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{AckTimeout: -1, IdleTimeout: -1})
	ctx := context.Background()
	r := u.reply(ctx)
	u.in("voice.capture.state", map[string]any{"requestId": "r1", "state": "speech_ended", "seconds": 1.5})
	u.in("voice.capture.level", map[string]any{"requestId": "r1", "rms": 0.5, "peak": 0.9, "seconds": 1})
	u.in("voice.capture.transcript", map[string]any{"requestId": "r1", "text": "\x1b]0;owned\x07"})
	// That they change neither the phase nor the answered flag is the
	// core's (internal/session, TestSession_captureEventsForAReply).
	testutil.Equal(t, "events queued", queued(r), 3)
	for i := 0; i < 3; i++ {
		ev, err := r.Next(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "event kind", ev.Kind, EventAnomaly)
		testutil.Equal(t, "anomaly kind", ev.Anomaly.Kind, stream.AnomalyUnexpectedEvent)
	}
	// The reply itself goes on as if nothing had come.
	u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hi"})
	u.in("reply.completed", map[string]any{"requestId": "r1"})
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, "Hi")
}

// Issue #16: messageIds are remembered by digest whatever their length,
// duplicates are still found, and an absurd id is reported once per
// session, bounded.
func TestSession_longMessageIDs(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	u := newUnit(t, &ServerOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	big := func(c string) string { return strings.Repeat(c, 1<<20) }
	for _, id := range []string{big("a"), big("b"), big("c"), big("a"), "short"} {
		b, err := wire.Encode("future.kind", id, u.c.info.ID, time.Now(), nil)
		testutil.Success(t, err)
		u.recv(b)
	}
	acks := u.ft.messages("ack")[1:] // after the hello's
	testutil.Equal(t, "acks", len(acks), 5)
	for i, dup := range []bool{false, false, false, true, false} {
		got, _ := acks[i]["duplicate"].(bool)
		testutil.Equal(t, "duplicate "+strconv.Itoa(i), got, dup)
	}
	testutil.Equal(t, "reports", strings.Count(log.String(), "over 256 bytes"), 1)
	if log.Len() > 2048 {
		t.Errorf("log of %d bytes for one report:\n%.3000s", log.Len(), log.String())
	}
}
