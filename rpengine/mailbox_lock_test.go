package rpengine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// Issue #31, item 3: setting the lock file's time to 1970, or a forward
// clock jump past LockStale, let a second game take a folder whose
// holder was alive, and both served it. A holder alive on this machine
// keeps its lock whatever the file's times say; the age decides only
// when liveness cannot be known (TestMailbox_staleLockTakenOver).
func TestMailbox_liveHolderKeepsLock(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	if host == "" {
		t.Skip("no host name: liveness cannot be known here")
	}
	for _, tc := range []struct {
		name string
		// holder serves dir or writes its lock, and returns a check
		// that it still holds it.
		holder func(t *testing.T, dir string) func()
		mtime  func() time.Time
	}{
		{"another server of this process, lock time 1970", serveHolder, func() time.Time { return time.Unix(0, 0) }},
		{"another server of this process, clock jumped 16 s", serveHolder, func() time.Time { return time.Now().Add(-16 * time.Second) }},
		{"another process on this machine, lock time 1970", processHolder(host), func() time.Time { return time.Unix(0, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				dir := filepath.Join(testutil.TempDir(t), "mb")
				still := tc.holder(t, dir)
				lock := filepath.Join(dir, rpengine.MailboxLockName)
				old := tc.mtime()
				testutil.Success(t, os.Chtimes(lock, old, old))
				o := testMailboxOptions(dir)
				o.LockStale = 15 * time.Second // the default, which the clock jump passes
				srv2, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
				testutil.Success(t, err)
				testutil.ErrorIs(t, srv2.Start(), rpengine.ErrMailboxLocked)
				testutil.Success(t, srv2.Close())
				still()
			})
		})
	}
}

// serveHolder serves dir with a Server of this process.
func serveHolder(t *testing.T, dir string) func() {
	o := testMailboxOptions(dir)
	o.LockStale = 15 * time.Second
	l := newMailboxServer(t, &rpengine.ServerOptions{Mailbox: o}, dir)
	b, err := os.ReadFile(filepath.Join(dir, rpengine.MailboxLockName))
	testutil.Success(t, err)
	return func() {
		now, err := os.ReadFile(filepath.Join(dir, rpengine.MailboxLockName))
		testutil.Success(t, err)
		testutil.Equal(t, "the holder's lock stays", string(now), string(b))
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "still mine"))
		testutil.Success(t, err)
		_, err = r.Wait(ctxT(t))
		testutil.Success(t, err)
		eng.Close()
	}
}

// processHolder writes a lock held by a live process of this machine:
// the test's parent (go test, or a shell).
func processHolder(host string) func(t *testing.T, dir string) func() {
	return func(t *testing.T, dir string) func() {
		ppid := os.Getppid()
		if ppid <= 0 {
			t.Skip("no parent process")
		}
		testutil.Success(t, os.Mkdir(dir, 0o700))
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		info, _ := json.Marshal(map[string]any{"pid": ppid, "host": host, "token": "parent"})
		testutil.Success(t, os.WriteFile(lock, info, 0o600))
		return func() {
			b, err := os.ReadFile(lock)
			testutil.Success(t, err)
			testutil.Equal(t, "the holder's lock stays", string(b), string(info))
		}
	}
}
