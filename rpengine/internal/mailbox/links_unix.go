//go:build unix

package mailbox

import (
	"os"
	"syscall"
)

// statLinks returns the link count in fi (1 when unknown).
func statLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
