package optdef

import (
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestApply(t *testing.T) {
	t.Parallel()
	a, b, c := time.Duration(0), -time.Second, 3*time.Second
	name, why := Apply(Positive("A", &a, time.Minute), NegativeOff("B", &b, time.Hour), Positive("C", &c, time.Hour))
	testutil.Equal(t, "name", name, "")
	testutil.Equal(t, "reason", why, "")
	testutil.Equal(t, "zero gets the default", a, time.Minute)
	testutil.Equal(t, "negative kept where it disables", b, -time.Second)
	testutil.Equal(t, "set kept", c, 3*time.Second)

	x, y, z := 0, -2, 0
	name, why = Apply(Positive("X", &x, 16), Positive("Y", &y, 8), Positive("Z", &z, 4))
	testutil.Equal(t, "name", name, "Y")
	testutil.Equal(t, "reason", why, "negative (-2)")
	testutil.Equal(t, "before the bad one: default", x, 16)
	testutil.Equal(t, "after the bad one: untouched", z, 0)

	d := -time.Millisecond
	_, why = Apply(Positive("D", &d, time.Second))
	testutil.Equal(t, "a duration is written as one", why, "negative (-1ms)")
}
