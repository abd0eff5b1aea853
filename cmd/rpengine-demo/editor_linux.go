package main

import "golang.org/x/sys/unix"

const ioctlGetTermios, ioctlSetTermios = unix.TCGETS, unix.TCSETS

// vdisable is _POSIX_VDISABLE: a control character no key sends.
const vdisable = 0
