package audio

import (
	"sync"
	"time"
)

// nullDevice is a playback device without a sound card, in pure Go: a
// goroutine of its own, started by start and ended by stop, calls data in
// real time, one period at a time, and the sound goes nowhere. It is what
// [DeviceOptions.Null] opens, and what a [Device] plays through while its
// sound card is lost.
type nullDevice struct {
	data     func(buf []float32)
	rate, ch int
	period   time.Duration
	frames   int64     // per period
	buf      []float32 // one period, reused
	mu       sync.Mutex
	pace     pacer         // nil while stopped; guarded by mu
	stoppd   chan struct{} // closed when run returns; guarded by mu
}

var nullOpener opener = openNull

func openNull(cfg deviceConfig) (device, error) {
	d := &nullDevice{data: cfg.data, rate: cfg.sampleRate, ch: cfg.channels, period: cfg.period}
	if d.rate == 0 {
		d.rate = defaultMixRate
	}
	if d.ch == 0 {
		d.ch = defaultChannels
	}
	if d.period == 0 {
		d.period = 10 * time.Millisecond
	}
	d.frames = max(1, framesOf(d.period, d.rate))
	d.buf = make([]float32, d.frames*int64(d.ch))
	return d, nil
}

func (d *nullDevice) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pace == nil {
		d.pace, d.stoppd = newPacer(d.period), make(chan struct{})
		go d.run(d.pace, d.stoppd)
	}
	return nil
}

// stop returns once the goroutine has ended: no call of data runs after it.
func (d *nullDevice) stop() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pace != nil {
		d.pace.close()
		<-d.stoppd
		d.pace, d.stoppd = nil, nil
	}
	return nil
}

func (d *nullDevice) close() error { return d.stop() }

func (d *nullDevice) format() (int, int) { return d.rate, d.ch }

// run renders every period that is due by the wall clock, so the pace
// does not drift with the wakeups' jitter. After a stall of more than
// maxLag (a suspended machine, a debugger) it goes on from the present
// instead of rendering the missed periods in a burst.
func (d *nullDevice) run(p pacer, stopped chan struct{}) {
	defer close(stopped)
	const maxLag = 10 // periods
	start, played := time.Now(), int64(0)
	for p.wait() {
		due := framesOf(time.Since(start), d.rate)
		if due-played > maxLag*d.frames {
			played = due - d.frames
		}
		for ; played+d.frames <= due; played += d.frames {
			clear(d.buf)
			d.data(d.buf)
		}
	}
}

// pacer wakes the Null device's goroutine about once a period: wait
// returns true then, and false once close was called (once, from another
// goroutine). On Linux it is a timerfd (device_null_linux.go), elsewhere a
// Go ticker.
type pacer interface {
	wait() bool
	close()
}

// tickPacer is a pacer on a Go ticker: each wakeup costs the runtime
// three threads' (the one polling, one woken to spin, sysmon), but it
// works everywhere and follows the clock of a testing/synctest bubble.
type tickPacer struct {
	t    *time.Ticker
	stop chan struct{}
}

func newTickPacer(period time.Duration) pacer {
	return &tickPacer{t: time.NewTicker(period), stop: make(chan struct{})}
}

func (p *tickPacer) wait() bool {
	select {
	case <-p.t.C:
		return true
	case <-p.stop:
		return false
	}
}

func (p *tickPacer) close() {
	p.t.Stop()
	close(p.stop)
}

// framesOf returns the whole frames that d lasts at rate Hz, without
// overflow for any d.
func framesOf(d time.Duration, rate int) int64 {
	secs, rest := int64(d/time.Second), int64(d%time.Second)
	return secs*int64(rate) + rest*int64(rate)/int64(time.Second)
}
