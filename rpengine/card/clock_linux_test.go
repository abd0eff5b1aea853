package card

import (
	"runtime"
	"syscall"
	"time"
)

// benchClock returns this thread's CPU time, so that a ratio measured on
// the shared, overloaded CI machines does not depend on how often other
// processes preempt the benchmark. Callers lock the OS thread.
func benchClock() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const benchClockName = "thread CPU time"

func lockThread() func() { runtime.LockOSThread(); return runtime.UnlockOSThread }
