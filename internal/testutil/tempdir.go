package testutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TempDir is tb.TempDir for tests that leave files in it. On Windows it
// also empties the folder first at cleanup with plain DeleteFile and
// RemoveDirectory: Go's own cleanup removes through
// FileDispositionInformationEx, which wine 8 (the Windows tests' CI
// runner) does not implement, so it would fail on any file left behind.
// What the cleanup cannot remove still fails the test there.
func TempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if runtime.GOOS == "windows" {
		tb.Cleanup(func() { _ = removeTree(dir) })
	}
	return dir
}

// removeTree removes dir and everything under it, deepest first, with
// os.Remove, and returns the first failure (a name already gone is none).
func removeTree(dir string) error {
	var names []string
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			names = append(names, p)
		}
		return nil
	})
	var first error
	for _, p := range slices.Backward(names) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// RemoveAll is os.RemoveAll that also works under wine 8 (see TempDir).
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	// A file another goroutine or process holds open goes only once it is
	// closed there: try again for a while.
	for i := 0; err != nil && runtime.GOOS == "windows" && i < 100; i++ {
		if err = removeTree(path); err != nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return err
}

// Symlink makes newname a symbolic link to oldname and reports whether
// it could. Only on Windows may it say no (then it logs why and the test
// leaves out its symlink cases): creating one there needs Developer Mode
// or an administrator, and wine 8 reports success without making one.
func Symlink(tb testing.TB, oldname, newname string) bool {
	tb.Helper()
	err := os.Symlink(oldname, newname)
	if err == nil {
		fi, lerr := os.Lstat(newname)
		if lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
		err = fmt.Errorf("the link was not made (Lstat: %v)", lerr)
		_ = os.Remove(newname)
	}
	if runtime.GOOS != "windows" {
		tb.Fatalf("symlink %s: %v", newname, err)
	}
	tb.Logf("symlink cases left out: this Windows cannot make symlinks (%v)", err)
	return false
}
