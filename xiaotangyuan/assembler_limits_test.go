package xiaotangyuan

import (
	"fmt"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// A Harness that starts interactions and never finishes them, or finishes
// very many, cannot grow an Assembler without bound: the oldest active
// interaction and the oldest retired id are forgotten first.
func Test_assemblerLimits(t *testing.T) {
	t.Parallel()
	var a Assembler
	for i := range 10 * maxActive {
		a.Delta(fmt.Sprint("open", i), SourceChat, "x", "x", 0)
	}
	testutil.Equal(t, "active", len(a.active), maxActive)
	_, newest := a.active[fmt.Sprint("open", 10*maxActive-1)]
	_, oldest := a.active["open0"]
	testutil.Equal(t, "newest kept, oldest forgotten", [2]bool{newest, oldest}, [2]bool{true, false})

	for i := range 10 * maxRetired {
		a.Done(fmt.Sprint("done", i), SourceChat, "x")
	}
	a.Cancel("barge-in")
	testutil.Equal(t, "retired", len(a.retired), maxRetired)
	testutil.Equal(t, "ring", len(a.order), maxRetired)
	testutil.Equal(t, "latest cancel remembered", a.Cancelled(fmt.Sprint("open", 10*maxActive-1)), true)
	_, ok := a.Done("done0", SourceChat, "x")
	testutil.Equal(t, "forgotten id accepted again", ok, true)
}
