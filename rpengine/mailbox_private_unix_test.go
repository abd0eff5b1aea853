//go:build unix

package rpengine_test

import (
	"os"
	"testing"
)

// makeOthersWritable lets every user write into the folder p.
func makeOthersWritable(t *testing.T, p string) {
	t.Helper()
	if err := os.Chmod(p, 0o777); err != nil {
		t.Fatal(err)
	}
}

// giveAway makes another user own p, or says why it cannot.
func giveAway(t *testing.T, p string) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("a folder another user owns: left out, only root can give one away (CI runs as root)")
		return false
	}
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	return true
}

// modeOf returns p's permission bits, and whether this platform has them.
func modeOf(t *testing.T, p string) (os.FileMode, bool) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm(), true
}
