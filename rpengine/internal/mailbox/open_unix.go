//go:build unix

package mailbox

import (
	"os"
	"syscall"
)

// readFlags opens without blocking: a file swapped for a FIFO after the
// Lstat would otherwise hang the reader until a writer appeared (the
// SameFile check then refuses it). No effect on regular files.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
