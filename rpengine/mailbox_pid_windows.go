//go:build windows

package rpengine

import "os"

// processAlive reports whether a process with this PID exists (FindProcess
// opens it on Windows). When unsure it says yes: the lock's heartbeat then
// decides.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
