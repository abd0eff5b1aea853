//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "errors"

// cbreak is not available here: lines are read as from a pipe. (On
// Windows the console edits the line itself before the demo reads it.)
func cbreak(int) (func() error, error) {
	return nil, errors.New("rpengine-demo: no line editor on this platform")
}

func watchResize(*editor) {}
