//go:build windows

package mailbox

import (
	"errors"

	"golang.org/x/sys/windows"
)

// processAlive reports whether a process with this PID is running, and
// known false when it cannot tell: the lock's age then decides. A
// process that has exited stays openable while anyone holds a handle to
// it (its parent, for one), so opening it is not enough: it is alive only
// while its handle is not yet signalled.
func processAlive(pid int) (alive, known bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER): // no such process
		return false, true
	case errors.Is(err, windows.ERROR_ACCESS_DENIED): // another user's
		return true, true
	case err != nil:
		return false, false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	if err != nil {
		return false, false
	}
	return ev != windows.WAIT_OBJECT_0, true
}
