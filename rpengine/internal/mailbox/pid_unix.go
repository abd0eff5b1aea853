//go:build unix

package mailbox

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this PID exists (signal 0
// probes without sending anything). When unsure it says yes: the lock's
// heartbeat then decides.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
