//go:build !linux

package main

// quietStderr runs f; only Linux (ALSA) needs silencing.
func quietStderr(_ any, f func()) { f() }
