//go:build unix

package rpengine_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// Issue #16, item 7: a folder "that others can write" includes one its
// group can write (the members of the group are other users; ssh's
// StrictModes refuses it too). TestMailbox_notPrivate uses 0777 only, so
// a check for the others' write bit alone passed it.
func TestMailbox_notPrivateGroupWritable(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testutil.TempDir(t), "mb")
	testutil.Success(t, os.Mkdir(dir, 0o700))
	testutil.Success(t, os.Chmod(dir, 0o770))
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler), Mailbox: testMailboxOptions(dir)})
	testutil.Success(t, err)
	defer srv.Close()
	testutil.ErrorIs(t, srv.Start(), rpengine.ErrMailboxNotPrivate)
	ents, _ := os.ReadDir(dir)
	testutil.Equal(t, "nothing written into it", len(ents), 0)
}
