package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// SharedDir returns the path of a folder inside the project's shared
// reference material (../shared beside the checkout, or $GAMELINK_SHARED),
// and skips the test with a clear message when it is absent: a user's clone
// has no shared/ folder, CI always has it.
func SharedDir(tb testing.TB, elem ...string) string {
	tb.Helper()
	root := os.Getenv("GAMELINK_SHARED")
	if root == "" {
		_, file, _, _ := runtime.Caller(0)
		// internal/testutil/shared.go -> repository root -> ../shared
		root = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared")
	}
	dir := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("shared reference material not found at %s (set GAMELINK_SHARED, or check out ../shared beside the repository): %v", dir, err)
	}
	return dir
}
