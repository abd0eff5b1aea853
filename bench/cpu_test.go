package bench

import (
	"testing"
	"time"
)

// cpuClock measures the CPU time (user + system, all threads) the process
// spends, which a loaded machine distorts far less than wall time: it is
// reported beside ns/op as cpu-ns/op. It includes the garbage collector
// and, for the loopback benchmark, the server's and engine's goroutines.
type cpuClock struct{ start time.Duration }

func startCPU() cpuClock { return cpuClock{cpuNow()} }

// report adds cpu-ns/op for the b.N operations since startCPU.
func (c cpuClock) report(b *testing.B) {
	if b.N > 0 && c.start > 0 {
		b.ReportMetric(float64(cpuNow()-c.start)/float64(b.N), "cpu-ns/op")
	}
}
