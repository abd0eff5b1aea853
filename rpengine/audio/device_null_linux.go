package audio

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newPacer returns a timerfdPacer, or a tickPacer where a timerfd cannot
// be had or cannot keep the time: in a testing/synctest bubble, whose
// clock only Go timers follow, and where the kernel refuses one.
func newPacer(period time.Duration) pacer {
	if p, err := newTimerfdPacer(period); err == nil {
		return p
	}
	return newTickPacer(period)
}

// timerfdPacer wakes the Null device's goroutine through a periodic
// timerfd in the network poller: the thread blocked in the poller wakes
// and runs the goroutine itself, one thread a period (what a sound card's
// thread costs), where a Go timer wakes three (see tickPacer; issue #31,
// bench/README.md). The timerfd is read with a raw system call, which
// cannot block on a non-blocking descriptor, because an ordinary one
// wakes the runtime's sysmon thread as it enters.
type timerfdPacer struct {
	f     *os.File
	rc    syscall.RawConn
	read  func(fd uintptr) bool // made once: wait does not allocate
	n     [8]byte               // the expirations read
	errno syscall.Errno
}

func newTimerfdPacer(period time.Duration) (*timerfdPacer, error) {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &now); err != nil {
		return nil, err
	}
	if d := time.Since(time.Unix(now.Unix())); d < -time.Second || d > time.Second {
		return nil, errors.New("audio: Go's clock is not the kernel's (a testing/synctest bubble)")
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	ts := unix.NsecToTimespec(int64(period))
	if err := unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Interval: ts, Value: ts}, nil); err != nil {
		unix.Close(fd)
		return nil, err
	}
	p := &timerfdPacer{f: os.NewFile(uintptr(fd), "timerfd")}
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return nil, err
	}
	p.read = func(fd uintptr) bool {
		_, _, p.errno = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&p.n[0])), uintptr(len(p.n)))
		return p.errno != unix.EAGAIN // else wait in the poller
	}
	return p, nil
}

func (p *timerfdPacer) wait() bool {
	return p.rc.Read(p.read) == nil && p.errno == 0
}

func (p *timerfdPacer) close() { p.f.Close() }
