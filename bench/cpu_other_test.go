//go:build !unix

package bench

import "time"

// cpuNow is not measured here: cpu-ns/op is left out.
func cpuNow() time.Duration { return 0 }
