package xtytest

import (
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func Test_accumulator(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a := accumulator{interval: 80 * time.Millisecond}
	testutil.Equal(t, "first at once", a.push("你", at(0)), pendingDelta{"你", "你", true})
	testutil.Equal(t, "held", a.push("好", at(10)), pendingDelta{})
	testutil.Equal(t, "sentence end", a.push("。", at(20)), pendingDelta{"好。", "你好。", true})
	testutil.Equal(t, "held again", a.push("我", at(50)), pendingDelta{})
	testutil.Equal(t, "interval passed", a.push("是", at(100)), pendingDelta{"我是", "你好。我是", true})
	testutil.Equal(t, "question mark", a.push("谁?", at(101)), pendingDelta{"谁?", "你好。我是谁?", true})
	testutil.Equal(t, "held", a.push("x", at(102)), pendingDelta{})
	testutil.Equal(t, "flush", a.flush(at(103)), pendingDelta{"x", "你好。我是谁?x", true})
	testutil.Equal(t, "empty flush", a.flush(at(104)), pendingDelta{})
}
