//go:build !unix

package mailbox

import "os"

// readFlags: see open_unix.go; other platforms have no FIFOs to swap in.
const readFlags = os.O_RDONLY
