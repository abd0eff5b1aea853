//go:build windows

package mailbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"golang.org/x/sys/windows"
)

// holdOpen opens name as another process (a browser) might: for reading,
// sharing read and write, and sharing delete only when asked.
func holdOpen(t *testing.T, name string, shareDelete bool) windows.Handle {
	t.Helper()
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE)
	if shareDelete {
		share |= windows.FILE_SHARE_DELETE
	}
	p, err := windows.UTF16PtrFromString(name)
	testutil.Success(t, err)
	h, err := windows.CreateFile(p, windows.GENERIC_READ, share, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	testutil.Success(t, err)
	return h
}

// TestWindowsSemantics: the mailbox's file operations under Windows file
// semantics, where another process's open handle can stand in the way.
// Issue #22.
func TestWindowsSemantics(t *testing.T) {
	dir := testutil.TempDir(t)
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	defer root.Close()
	full := func(n string) string { return filepath.Join(dir, n) }

	// Rename over an existing file (a slot going back to silence) while
	// the engine still reads it without sharing delete: retried until it
	// lets go.
	testutil.Success(t, ReplaceFile(root, "slot.wav", []byte("voice")))
	h := holdOpen(t, full("slot.wav"), false)
	go func() { time.Sleep(50 * time.Millisecond); windows.CloseHandle(h) }()
	testutil.Success(t, ReplaceFile(root, "slot.wav", []byte("silence")))
	b, err := os.ReadFile(full("slot.wav"))
	testutil.Success(t, err)
	testutil.Equal(t, "replaced", string(b), "silence")

	// Held for good: the sharing violation is reported, not waited on
	// forever, and nothing half-done stays (no temporary file).
	h = holdOpen(t, full("slot.wav"), false)
	start := time.Now()
	err = ReplaceFile(root, "slot.wav", []byte("again"))
	if err == nil || !sharingBusy(err) {
		t.Errorf("replace over a file held open: %v, want a sharing violation", err)
	}
	if d := time.Since(start); d > 10*shareRetry {
		t.Errorf("gave up after %v", d)
	}
	_, err = os.Lstat(full(TempPrefix + "slot.wav"))
	testutil.ErrorIs(t, err, fs.ErrNotExist)
	err = RemoveFile(root, "slot.wav")
	if err == nil || !sharingBusy(err) {
		t.Errorf("remove of a file held open: %v, want a sharing violation", err)
	}
	windows.CloseHandle(h)

	// Deleting a file another handle holds open with sharing delete (as
	// Go and browsers open): it goes (at once with POSIX semantics, once
	// closed without), and a message published meanwhile is unaffected.
	testutil.Success(t, os.Mkdir(full("out"), 0o700))
	testutil.Success(t, Write(root, "out", Stem(1, "a"), []byte("{}")))
	h = holdOpen(t, full(filepath.Join("out", Stem(1, "a")+JSONSuffix)), true)
	testutil.Success(t, Remove(root, "out", Stem(1, "a")))
	testutil.Success(t, Write(root, "out", Stem(2, "b"), []byte("{}")))
	windows.CloseHandle(h)
	ready, names, err := List(root, "out")
	testutil.Success(t, err)
	testutil.Equal(t, "one message left", len(ready), 1)
	testutil.Equal(t, "names", len(names), 2)
	testutil.Equal(t, "the new one", ready[0].Stem, Stem(2, "b"))

	// A message is never published over an existing one, even where the
	// temporary name and the rename are racing a reader.
	err = Write(root, "out", Stem(2, "b"), []byte(`{"other":1}`))
	testutil.ErrorIs(t, err, fs.ErrExist)
	if errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		t.Errorf("removal fell through to the unsupported call: %v", err)
	}
}
