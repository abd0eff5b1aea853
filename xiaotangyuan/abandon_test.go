package xiaotangyuan_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// chatty streams 25 sentences, one every 100 ms, as a long reply does
// (2.5 s in all), except for texts starting with "quick".
func chatty(ctx context.Context, turn *xtytest.Turn) (string, error) {
	if strings.HasPrefix(turn.Text, "quick") {
		return xtytest.Echo(ctx, turn)
	}
	var all strings.Builder
	for i := range 25 {
		s := fmt.Sprintf("Sentence %d.\n", i)
		all.WriteString(s)
		turn.Say(s) // a line end: sent at once
		time.Sleep(100 * time.Millisecond)
	}
	return all.String(), nil
}

// collect reads events until one satisfies stop.
func (e *env) collect(stop func(xty.Event) bool) []xty.Event {
	e.t.Helper()
	var evs []xty.Event
	for {
		ev := e.next()
		evs = append(evs, ev)
		if stop(ev) {
			return evs
		}
	}
}

// A chat whose caller gives up is abandoned: its stream ends on Events
// with one EventCancel (Reason "abandoned") and nothing of it follows,
// although the Harness goes on streaming it for 2 s more; its late result
// is dropped. The next chat waits for the Harness to finish the abandoned
// one (protocol v1.1 cannot interrupt it). Issue #20.
func TestClient_AbandonChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &xtytest.Options{Agent: chatty}, nil, nil)
		e.drain()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 350*time.Millisecond)
		defer cancel()
		_, err := e.c.Chat(ctx, "tell me a long story", nil)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		testutil.Equal(t, "returned at once", time.Since(start), 350*time.Millisecond)

		rep, err := e.c.Chat(context.Background(), "quick question", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "next reply", rep.Text, "You said: quick question")
		testutil.Equal(t, "the next chat waited for the abandoned one", time.Since(start), 2500*time.Millisecond)

		evs := e.collect(func(ev xty.Event) bool { return ev.Kind == xty.EventDone })
		abandoned := evs[0].InteractionID
		testutil.Equal(t, "first event starts the abandoned chat", evs[0].Kind, xty.EventStart)
		var shown []xty.EventKind
		for i, ev := range evs {
			if ev.InteractionID != abandoned {
				testutil.Equal(t, "the rest is the next chat", ev.InteractionID, rep.InteractionID)
				continue
			}
			shown = append(shown, ev.Kind)
			if ev.Kind == xty.EventCancel {
				testutil.Equal(t, "reason", ev.Reason, xty.ReasonAbandoned)
				for _, later := range evs[i+1:] {
					testutil.Equal(t, "nothing of it after the cancel", later.InteractionID == abandoned, false)
				}
			}
		}
		// Deltas at 0, 100, 200 and 300 ms, then the cancel at 350 ms.
		testutil.Equal(t, "abandoned chat on Events", shown, []xty.EventKind{xty.EventStart, xty.EventText, xty.EventText, xty.EventText, xty.EventText, xty.EventCancel})
		synctest.Wait()
		testutil.Equal(t, "nothing more", len(e.drain()), 0)
		log := e.recording()
		testutil.Equal(t, "late deltas dropped", strings.Count(log, "dropped: Text event of an abandoned chat.send"), 21)
		testutil.Equal(t, "late done dropped", strings.Count(log, "dropped: Done event of an abandoned chat.send"), 1)
		testutil.Equal(t, "late result dropped", strings.Count(log, "dropped: result of an abandoned chat.send"), 1)
	})
}

// A chat abandoned before any of its stream was shown leaves no trace on
// Events, not even a cancel; a retry abandoned mid-stream ends like a
// chat. Issue #20.
func TestClient_AbandonBeforeStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			time.Sleep(time.Second) // thinking before the first word
			return chatty(ctx, turn)
		}
		e := newEnv(t, &xtytest.Options{Agent: slow}, nil, nil)
		e.drain()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := e.c.Chat(ctx, "story", nil)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		time.Sleep(4 * time.Second) // the Harness streams and answers it
		synctest.Wait()
		testutil.Equal(t, "no events", len(e.drain()), 0)

		ctx, cancel = context.WithTimeout(context.Background(), 1150*time.Millisecond)
		defer cancel()
		_, err = e.c.Retry(ctx, nil)
		testutil.ErrorIs(t, err, context.DeadlineExceeded)
		time.Sleep(4 * time.Second)
		synctest.Wait()
		evs := e.drain()
		testutil.Equal(t, "retry's events", kinds(evs), []xty.EventKind{xty.EventStart, xty.EventText, xty.EventText, xty.EventCancel}) // no Present
		testutil.Equal(t, "retry source", evs[0].Source, xty.SourceRetry)
		testutil.Equal(t, "present dropped", strings.Count(e.recording(), "dropped: Present event of an abandoned chat.retry"), 1)
		testutil.Equal(t, "result dropped", strings.Count(e.recording(), "dropped: result of an abandoned chat.retry"), 1)
	})
}

// Chats waiting on one connection are bounded (abandoned ones hold their
// place until answered); the next one is refused at once.
func TestClient_TooManyChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		agent := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			<-release
			return "ok", nil
		}
		e := newEnv(t, &xtytest.Options{Agent: agent}, nil, nil)
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := e.c.Chat(context.Background(), "wait", nil)
				testutil.Success(t, err)
			}()
		}
		synctest.Wait()
		_, err := e.c.Chat(context.Background(), "one more", nil)
		testutil.Error(t, err)
		testutil.Equal(t, "says why", strings.Contains(err.Error(), "32 chats already waiting"), true)
		testutil.Equal(t, "not a disconnect", errors.Is(err, xty.ErrDisconnected), false)
		close(release)
		wg.Wait()
		_, err = e.c.Chat(context.Background(), "now", nil)
		testutil.Success(t, err)
	})
}

// What the documentation says about interrupting a chat in protocol v1.1,
// against the fake: voice.start and gateway.ping wait until the chat is
// done and do not cut it short; switching the save reconnects, which ends
// the chat at once and leaves the next one nothing to wait for. Issue #20.
func TestClient_InterruptingAChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, &xtytest.Options{Agent: chatty}, nil, nil)
		e.drain()
		start := time.Now()
		replies := make(chan xty.Reply, 1)
		go func() {
			rep, err := e.c.Chat(context.Background(), "long story", nil)
			testutil.Success(t, err)
			replies <- rep
		}()
		synctest.Wait()
		testutil.Success(t, e.c.StartVoice(context.Background()))
		testutil.Equal(t, "voice.start waited for the chat", time.Since(start), 2500*time.Millisecond)
		rep := <-replies
		testutil.Equal(t, "chat not cut short", strings.Count(rep.Text, "Sentence"), 25)
		testutil.Equal(t, "not cancelled", rep.Cancelled, false)

		errc := make(chan error, 1)
		go func() {
			_, err := e.c.Chat(context.Background(), "another long story", nil)
			errc <- err
		}()
		synctest.Wait()
		start = time.Now()
		testutil.Success(t, e.c.SetSaveID(context.Background(), xty.SaveID("testgame", "slot-2")))
		var de *xty.DisconnectError
		testutil.ErrorAs(t, <-errc, &de)
		testutil.Equal(t, "reason", de.Reason, "save switched")
		rep, err := e.c.Chat(context.Background(), "quick one", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "reply", rep.Text, "You said: quick one")
		testutil.Equal(t, "nothing to wait for", time.Since(start), time.Duration(0))
	})
}
