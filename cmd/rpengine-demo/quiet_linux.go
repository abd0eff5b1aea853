package main

import (
	"os"
	"syscall"
)

// quietStderr runs f with file descriptor 2 pointed at /dev/null, when w is
// the process's stderr. ALSA's C library prints a page of errors to fd 2
// when a machine has no sound card, before miniaudio reports the failure
// the demo then explains in one line.
func quietStderr(w any, f func()) {
	if w != os.Stderr {
		f()
		return
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		f()
		return
	}
	defer null.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		f()
		return
	}
	defer syscall.Close(saved)
	if syscall.Dup3(int(null.Fd()), 2, 0) != nil {
		f()
		return
	}
	defer syscall.Dup3(saved, 2, 0)
	f()
}
