//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

const ioctlGetTermios, ioctlSetTermios = unix.TIOCGETA, unix.TIOCSETA

// vdisable is _POSIX_VDISABLE: a control character no key sends.
const vdisable = 0xff
