package xiaotangyuan_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #17: a Recorder whose Write never returns does not stall the
// client: the handshake and a chat still go through, and Close gives up
// on the writer after jsonl.CloseStall, with a warning, rather than hang.
func TestClient_stuckRecorder(t *testing.T) {
	// A client that writes the recording itself waits for the writer with
	// its recorder's lock held, which synctest cannot see as a deadlock: a
	// real-time watchdog, which only such a client lets fire, fails the
	// test instead of letting it hang.
	watchdog := time.AfterFunc(time.Minute, func() {
		panic("TestClient_stuckRecorder: the client waited a minute for a stuck Recorder")
	})
	defer watchdog.Stop()
	synctest.Test(t, func(t *testing.T) {
		w := testutil.NewStuckWriter() // in the bubble: a Write waiting on it is durably blocked
		t.Cleanup(w.Release)
		var logs testutil.Logs
		opts := baseOptions()
		opts.Recorder, opts.Logger = w, logs.Logger()
		e := newEnv(t, nil, opts, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := e.c.Chat(ctx, "hello", nil)
		testutil.Success(t, err)
		testutil.Equal(t, "a reply came", rep.Text != "", true)
		start := time.Now()
		testutil.Success(t, e.c.Close())
		if d := time.Since(start); d < jsonl.CloseStall || d > jsonl.CloseStall+time.Second {
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
