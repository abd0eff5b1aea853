//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// cbreak turns off canonical input, echo and Ctrl-C's SIGINT (Ctrl-C is
// then a key for the editor) on the terminal fd, keeping the other
// signals (Ctrl-\, Ctrl-Z) and output processing, and returns the
// function that restores the previous mode. (term.MakeRaw would also turn
// those signals and output newline translation off.)
func cbreak(fd int) (restore func() error, err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	mode := *old
	mode.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	mode.Cc[unix.VMIN], mode.Cc[unix.VTIME] = 1, 0
	mode.Cc[unix.VINTR] = vdisable
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &mode); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}

// watchResize keeps the editor's width in step with the terminal's. The
// goroutine lives as long as the process, as the signal does.
func watchResize(e *editor) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	go func() {
		for range c {
			e.resize()
		}
	}()
}
