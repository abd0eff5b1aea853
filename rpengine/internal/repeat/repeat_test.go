package repeat

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// lines returns the lines of log that contain sub.
func lines(log *testutil.SyncBuffer, sub string) []string {
	var out []string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

func newRepeatLog() (*slog.Logger, *Handler, *testutil.SyncBuffer) {
	ll := &testutil.SyncBuffer{}
	rh := NewHandler(slog.NewTextHandler(ll, nil))
	return slog.New(rh), rh, ll
}

// Issue #16: a repeated condition is logged when it starts and when it
// ends, with a count. A burst of 200 refusals writes 50 lines, one line
// saying the rest are counted, and after 10 s of quiet one line with the
// count; the next refusal is logged again. Other lines are untouched, and
// loggers derived with With share the count.
func TestRepeatHandler_burst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		log, _, ll := newRepeatLog()
		for i := 0; i < 200; i++ {
			log.With("conn", i).Warn("rpengine: refused connection", "reason", "no Origin header")
			if i%20 == 0 {
				log.Info("rpengine: something else")
			}
			time.Sleep(time.Millisecond)
		}
		testutil.Equal(t, "refusals logged", len(lines(ll, `msg="rpengine: refused connection"`)), repeatBurst)
		testutil.Equal(t, "other lines logged", len(lines(ll, "something else")), 10)
		start := lines(ll, "counting instead of logging")
		testutil.Equal(t, "start lines", len(start), 1)
		testutil.Equal(t, "start line names the line", strings.Contains(start[0], `line="rpengine: refused connection"`), true)
		testutil.Equal(t, "no end yet", len(lines(ll, "stopped repeating")), 0)
		time.Sleep(repeatQuiet)
		synctest.Wait()
		end := lines(ll, "stopped repeating")
		testutil.Equal(t, "end lines", len(end), 1)
		for _, want := range []string{"count=200", "notLogged=150", "over=199ms", "conn=50"} {
			if !strings.Contains(end[0], want) {
				t.Errorf("end line %q lacks %s", end[0], want)
			}
		}
		log.Warn("rpengine: refused connection", "reason", "after")
		testutil.Equal(t, "logged again", len(lines(ll, `reason=after`)), 1)
	})
}

// Issue #16: a slow but steady repetition is one condition as long as the
// gaps are under repeatQuiet; Close ends it with its count.
func TestRepeatHandler_steadyUntilClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		log, rh, ll := newRepeatLog()
		for i := 0; i < 120; i++ {
			log.Warn("rpengine: dropped engine message", "i", i)
			time.Sleep(repeatQuiet - time.Second)
		}
		testutil.Equal(t, "logged", len(lines(ll, `msg="rpengine: dropped engine message"`)), repeatBurst)
		testutil.Equal(t, "not ended", len(lines(ll, "stopped repeating")), 0)
		rh.st.close()
		end := lines(ll, "stopped repeating")
		testutil.Equal(t, "ended at close", len(end), 1)
		testutil.Equal(t, "count", strings.Contains(end[0], "count=120 notLogged=70"), true)
		log.Warn("rpengine: dropped engine message", "i", "after close")
		testutil.Equal(t, "logged after close", len(lines(ll, `i="after close"`)), 1)
		synctest.Wait()
		testutil.Equal(t, "one end line", len(lines(ll, "stopped repeating")), 1)
	})
}

// Issue #16: the messages tracked are bounded; beyond repeatKeys, other
// messages share one count, so even distinct messages cannot flood.
func TestRepeatHandler_keysBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		log, rh, ll := newRepeatLog()
		for i := 0; i < 1000; i++ {
			log.Warn("m" + strconv.Itoa(i))
		}
		testutil.Equal(t, "lines", len(lines(ll, "level=WARN")), repeatKeys+repeatBurst+1)
		rh.st.close()
		testutil.Equal(t, "shared count", len(lines(ll, `line=(several) count=936`)), 1)
	})
}
