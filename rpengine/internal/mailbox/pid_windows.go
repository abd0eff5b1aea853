//go:build windows

package mailbox

import (
	"errors"

	"golang.org/x/sys/windows"
)

// processAlive reports whether a process with this PID is running. A
// process that has exited stays openable while anyone holds a handle to
// it (its parent, for one), so opening it is not enough: it is alive only
// while its handle is not yet signalled. When unsure it says yes: the
// lock's heartbeat then decides.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		// No such process is ERROR_INVALID_PARAMETER; anything else
		// (access denied: another user's process) means it exists.
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev != windows.WAIT_OBJECT_0
}
