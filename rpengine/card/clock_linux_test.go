package card

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// benchClock returns this thread's CPU time, so that a ratio measured on
// the shared, overloaded CI machines does not depend on how often other
// processes preempt the benchmark. Callers lock the OS thread. It reads
// CLOCK_THREAD_CPUTIME_ID (nanoseconds): getrusage(RUSAGE_THREAD) counts
// in scheduler ticks, too coarse for iterations of a few microseconds (a
// small card's cold hash measured 0).
func benchClock() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}

const benchClockName = "thread CPU time"

func lockThread() func() { runtime.LockOSThread(); return runtime.UnlockOSThread }
