//go:build unix

package mailbox

import (
	"fmt"
	"os"
	"syscall"
)

// Folder and file modes the mailbox creates: private to the user (the
// conversation and the player's recorded voice pass through them).
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// CheckPrivate returns nil when the open folder f is owned by this
// process's user (or root, who can do anything anyway) and no other
// user can write into it; otherwise it says why, in the terms of ssh's
// StrictModes. Read access for others is not refused (a folder the
// player made readable is theirs to share); the game's own are 0700.
func CheckPrivate(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Errorf("owned by uid %d, not by this process's uid %d", st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("mode %v: other users can write into it", perm)
	}
	return nil
}
