package rpengine_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// Issue #31, item 4: every run of rpengine-demo --engine sim --mailbox
// logged "renameat ...: file already closed" at exit: Shutdown closed the
// mailbox folder while the session's writer was still writing the ack of
// the last engine message. A game that stops right after a reply logs no
// error: the writes of the session end before the folder is closed.
func TestMailbox_shutdownAfterReply(t *testing.T) {
	t.Parallel()
	for i := range 10 {
		synctest.Test(t, func(t *testing.T) {
			l := newMailboxServer(t, nil, "")
			l.eng = l.dialMailbox(t, nil)
			r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "hello"))
			testutil.Success(t, err)
			_, err = r.Wait(ctxT(t))
			testutil.Success(t, err)
			testutil.Success(t, l.srv.Close())
			if log := l.log.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
				t.Fatalf("run %d: a warning or error at shutdown:\n%s", i, log)
			}
			_ = rpengine.ErrServerClosed
		})
	}
}
