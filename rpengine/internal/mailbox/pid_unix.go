//go:build unix

package mailbox

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this PID exists (signal 0
// probes without sending anything), and known false when the probe
// cannot tell: the lock's age then decides.
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM): // EPERM: another user's
		return true, true
	case errors.Is(err, syscall.ESRCH):
		return false, true
	}
	return false, false
}
