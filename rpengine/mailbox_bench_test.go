package rpengine_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// BenchmarkMailbox_reply measures one text reply end to end over the file
// mailbox (1 ms polling on both sides, so that the figure is the cost of
// the files rather than of the poll interval) against the same reply over
// loopback WebSocket, the reference, in the same run.
func BenchmarkMailbox_reply(b *testing.B) {
	for _, tr := range []string{"websocket", "mailbox"} {
		b.Run(tr, func(b *testing.B) {
			var srv *rpengine.Server
			switch tr {
			case "websocket":
				f := newTCPServer(b, &rpengine.ServerOptions{Logger: discardLogger()})
				f.dial(b, nil)
				srv = f.srv
			case "mailbox":
				dir := filepath.Join(testutil.TempDir(b), "mb")
				o := testMailboxOptions(dir)
				o.ActivePoll, o.IdlePoll = time.Millisecond, time.Millisecond
				l := newMailboxServer(b, &rpengine.ServerOptions{Mailbox: o, Logger: discardLogger()}, dir)
				l.dialMailbox(b, nil)
				srv = l.srv
			}
			ctx := ctxT(b)
			c := testCard(b)
			b.ResetTimer()
			for b.Loop() {
				r, err := srv.Reply(ctx, textReq(c, "hello"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMailbox_setup measures creating a mailbox folder with the
// default 2048 audio slots (what Start does before the engine can
// connect).
func BenchmarkMailbox_setup(b *testing.B) {
	for b.Loop() {
		dir := filepath.Join(testutil.TempDir(b), "mb")
		o := testMailboxOptions(dir)
		o.SlotCount = 0
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Mailbox: o, Logger: discardLogger()})
		testutil.Success(b, err)
		testutil.Success(b, srv.Start()) // returns once the folder is ready
		testutil.Success(b, srv.Close())
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
