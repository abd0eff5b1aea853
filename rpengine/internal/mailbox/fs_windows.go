//go:build windows

package mailbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// Windows file semantics differ from POSIX where the mailbox meets them:
//
//   - Another process (the engine is a browser) may hold a file open
//     without FILE_SHARE_DELETE: renaming over it or removing it then
//     fails with a sharing violation or access denied until it closes.
//     Such errors are retried for a short, bounded time (shareRetry),
//     then returned; every caller either retries at its next poll or
//     reports the error.
//   - os.Root removes files with FileDispositionInformationEx (POSIX
//     delete semantics). Windows before 10 1607 on some file systems,
//     and wine 8, answer ERROR_INVALID_FUNCTION; removeFile then opens
//     the file by its full path without following a reparse point,
//     checks it is the very file the root sees, and marks it for
//     deletion the classic way (the name goes when the last handle
//     closes).

// shareRetry is the total time a sharing violation is retried.
const shareRetry = 250 * time.Millisecond

// sharingBusy reports whether err means "another handle is in the way".
func sharingBusy(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_LOCK_VIOLATION) ||
		errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

// retryShared runs op until it succeeds, fails for another reason, or
// shareRetry has passed.
func retryShared(op func() error) error {
	deadline := time.Now().Add(shareRetry)
	for d := time.Millisecond; ; d = min(2*d, 32*time.Millisecond) {
		err := op()
		if err == nil || !sharingBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(d)
	}
}

// OpenRoot is os.OpenRoot, a sharing violation retried briefly: a folder
// that another handle is renaming or holds without sharing cannot be
// opened for that moment.
func OpenRoot(dir string) (*os.Root, error) {
	var root *os.Root
	err := retryShared(func() (err error) { root, err = os.OpenRoot(dir); return err })
	return root, err
}

func renameFile(root *os.Root, oldname, newname string) error {
	return retryShared(func() error { return root.Rename(oldname, newname) })
}

func removeFile(root *os.Root, name string) error {
	return retryShared(func() error {
		err := root.Remove(name)
		if errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
			err = removeClassic(root, name)
		}
		return err
	})
}

// removeClassic deletes name with FileDispositionInfo through a handle
// opened on its full path, after checking that the handle is the file
// root.Lstat sees (so a folder swapped for a junction meanwhile cannot
// redirect the deletion outside the root).
func removeClassic(root *os.Root, name string) error {
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	full, err := filepath.Abs(filepath.Join(root.Name(), filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(longPath(full))
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.DELETE|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return &os.PathError{Op: "remove", Path: full, Err: err}
	}
	f := os.NewFile(uintptr(h), full)
	defer f.Close()
	if hfi, err := f.Stat(); err != nil || !os.SameFile(fi, hfi) {
		return &os.PathError{Op: "remove", Path: full, Err: fmt.Errorf("%w (replaced while removing)", ErrNotRegular)}
	}
	del := byte(1) // FILE_DISPOSITION_INFO{DeleteFile: TRUE}
	if err := windows.SetFileInformationByHandle(h, windows.FileDispositionInfo, &del, 1); err != nil {
		return &os.PathError{Op: "remove", Path: full, Err: err}
	}
	return nil
}

// longPath gives an absolute path the \\?\ prefix that lifts the
// 260-character limit of the Win32 path functions.
func longPath(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\`) {
		return p
	}
	return `\\?\` + p
}

// linkCount returns the number of hard links (names) of the open file f.
func linkCount(f *os.File) (uint64, error) {
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &d); err != nil {
		return 0, err
	}
	return uint64(d.NumberOfLinks), nil
}
