//go:build !unix && !windows

package mailbox

// processAlive cannot tell on this platform: the lock's age decides.
func processAlive(int) (alive, known bool) { return false, false }
