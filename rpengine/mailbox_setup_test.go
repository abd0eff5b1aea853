package rpengine_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
)

// incomplete reports what the engine's page would miss in dir if the
// player selected it now: the manifest or a folder it names ("" when
// nothing, or when dir does not exist, which a player cannot select).
// It looks through one handle, so a folder moved away meanwhile is seen
// whole.
func incomplete(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	for _, name := range []string{mbx.ManifestName, mbx.ToEngine, mbx.FromEngine, mbx.AudioDir} {
		if _, err := root.Lstat(name); err != nil {
			return name
		}
	}
	return ""
}

// Issue #33, item 8: the engine's page reads manifest.json once, when the
// player selects the folder, and a missing one is an error it never
// retries; the game wrote the manifest last, after 2,048 slot files. At
// no moment of setup, the first or one after the folder was deleted,
// does the folder exist without its manifest and folders: checked at
// every slot written, and by a watcher looking all along.
func TestMailbox_setupNeverWithoutManifest(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testutil.TempDir(t), "mb")
	o := testMailboxOptions(dir)
	o.SlotCount = 256 // of 2048 by default: the window was the time to write them
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
	testutil.Success(t, err)
	var atSlot sync.Map // what was missing -> a slot it was missing at
	rpengine.OnMailboxSlot(srv, func(slot int) {
		if miss := incomplete(dir); miss != "" {
			atSlot.LoadOrStore(miss, slot)
		}
	})
	var seen, missing atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if incomplete(dir) != "" {
				missing.Add(1)
			}
			seen.Add(1)
			time.Sleep(50 * time.Microsecond)
		}
	}()
	testutil.Success(t, srv.Start())
	last := filepath.Join(dir, mbx.AudioDir, mbx.SlotName(o.SlotCount-1))
	if trash, moved := moveAway(t, dir); moved {
		// Deleted while served: set up again, under the same watch.
		waitFile(t, last)
		testutil.Success(t, testutil.RemoveAll(trash))
	}
	testutil.Success(t, srv.Close())
	close(stop)
	<-watched
	atSlot.Range(func(k, v any) bool {
		t.Errorf("the folder had no %v when slot %v was written", k, v)
		return true
	})
	testutil.Equal(t, "times the watcher found the folder without its manifest or folders", missing.Load(), int64(0))
	t.Logf("%d looks", seen.Load())
}

// Issue #33, item 8, from the engine's side: a player who selects the
// folder the moment it appears, while the game writes its slots,
// connects (enginetest reads the manifest once, as the page does).
func TestMailbox_selectedDuringSetup(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testutil.TempDir(t), "mb")
	o := testMailboxOptions(dir)
	o.SlotCount = 256
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
	testutil.Success(t, err)
	t.Cleanup(func() { testutil.Success(t, srv.Close()) })
	started := make(chan error, 1)
	go func() { started <- srv.Start() }()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	eng, err := enginetest.DialMailbox(ctx, dir, nil, &enginetest.MailboxOptions{Poll: time.Millisecond})
	testutil.Success(t, <-started)
	testutil.Success(t, err)
	eng.Close()
}
