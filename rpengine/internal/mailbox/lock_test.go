package mailbox

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Test_mailboxTakeStaleRace: two processes judge the same lock stale; the
// first takes it over and creates its own before the second renames. The
// second must not move the first's fresh lock away.
func Test_mailboxTakeStaleRace(t *testing.T) {
	t.Parallel()
	dir := testutil.TempDir(t)
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	defer root.Close()
	lock := filepath.Join(dir, LockName)
	testutil.Success(t, os.WriteFile(lock, []byte(`{"token":"crashed"}`), 0o644))
	stale, err := root.Lstat(LockName)
	testutil.Success(t, err)
	// The first taker's lock replaces the stale one.
	testutil.Success(t, os.Rename(lock, lock+".gone"))
	testutil.Success(t, os.WriteFile(lock, []byte(`{"token":"first"}`), 0o644))
	m := &Server{o: Options{Dir: dir}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), tok: "second"}
	m.takeStale(root, stale, time.Hour, 0, false)
	b, err := os.ReadFile(lock)
	testutil.Success(t, err)
	testutil.Equal(t, "the first taker's lock stays", string(b), `{"token":"first"}`)
	_, err = os.Lstat(lock + ".stale-second")
	testutil.ErrorIs(t, err, os.ErrNotExist)
	// The stale lock itself is taken.
	testutil.Success(t, os.Remove(lock))
	testutil.Success(t, os.Rename(lock+".gone", lock))
	m.takeStale(root, stale, time.Hour, 0, false)
	_, err = os.Lstat(lock)
	testutil.ErrorIs(t, err, os.ErrNotExist)
}
