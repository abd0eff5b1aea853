package rpengine_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// TestServer_stuckRecorder: a ServerOptions.Recorder whose Write never
// returns (a pipe nobody reads) holds up no traffic, and Close returns
// after the recorder's stall bound with a warning, instead of waiting
// for the Write forever.
func TestServer_stuckRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stuck := testutil.NewStuckWriter()
		defer stuck.Release()
		var logs testutil.SyncBuffer
		l := enginetest.NewListener()
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Recorder: stuck,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		testutil.Success(t, err)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		ctx := ctxT(t)
		eng, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
		testutil.Success(t, err)
		r, err := srv.Reply(ctx, textReq(testCard(t), "hi"))
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: hi")
		eng.Close()
		start := time.Now()
		testutil.Success(t, srv.Close())
		if took := time.Since(start); took < 5*time.Second || took > 6*time.Second {
			t.Errorf("Close took %v with a stuck recorder, want its 5 s stall bound", took)
		}
		testutil.ErrorIs(t, <-served, rpengine.ErrServerClosed)
		if !strings.Contains(logs.String(), "rpengine: recording incomplete") {
			t.Errorf("no warning that the recording is incomplete:\n%s", logs.String())
		}
	})
}
