package xiaotangyuan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// step is one input to an Assembler in a table.
type step struct {
	op    string // start, delta, done, cancel
	id    string
	text  string
	want  bool // whether an event comes out
	reset bool // delta: StepReset expected
}

func run(a *xty.Assembler, s step) (xty.Event, bool) {
	switch s.op {
	case "start":
		return a.Start(s.id, xty.SourceChat)
	case "delta":
		return a.Delta(s.id, xty.SourceChat, "", s.text, 0)
	case "done":
		return a.Done(s.id, xty.SourceChat, s.text)
	case "cancel":
		return a.Cancel("barge-in"), true
	}
	panic(s.op)
}

func TestAssembler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"replace not concatenate", []step{
			{"start", "a", "", true, false},
			{"delta", "a", "你好", true, false},
			{"delta", "a", "你好，我是小汤圆", true, false},
			{"done", "a", "你好，我是小汤圆。", true, false},
		}},
		{"step reset", []step{
			{"delta", "a", "Checking the map... ", true, false},
			{"delta", "a", "Foun", true, true},
			{"delta", "a", "Found it", true, false},
		}},
		{"duplicate delta dropped", []step{
			{"delta", "a", "Hi", true, false},
			{"delta", "a", "Hi", false, false},
		}},
		{"duplicate start dropped", []step{
			{"start", "a", "", true, false},
			{"start", "a", "", false, false},
		}},
		{"done without start", []step{
			{"done", "p", "proactive text", true, false},
			{"done", "p", "proactive text", false, false},
		}},
		{"late events after done dropped", []step{
			{"delta", "a", "x", true, false},
			{"done", "a", "x", true, false},
			{"delta", "a", "xy", false, false},
			{"start", "a", "", false, false},
		}},
		{"cancel drops the streaming interaction only", []step{
			{"start", "a", "", true, false},
			{"delta", "a", "Hello", true, false},
			{"cancel", "", "", true, false},
			{"start", "a", "", false, false},
			{"delta", "a", "Hello there", false, false},
			{"done", "a", "Hello there", false, false},
			{"start", "b", "", true, false},
			{"delta", "b", "new", true, false},
		}},
		{"cancel with nothing streaming", []step{
			{"cancel", "", "", true, false},
			{"start", "a", "", true, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var a xty.Assembler
			for i, s := range tc.steps {
				ev, ok := run(&a, s)
				testutil.Equal(t, fmt.Sprintf("step %d (%s %s) emitted", i, s.op, s.id), ok, s.want)
				if ok && s.op == "delta" {
					testutil.Equal(t, fmt.Sprintf("step %d text", i), ev.Text, s.text)
					testutil.Equal(t, fmt.Sprintf("step %d reset", i), ev.StepReset, s.reset)
				}
				if ok && s.op == "done" {
					testutil.Equal(t, fmt.Sprintf("step %d done text", i), ev.Text, s.text)
				}
			}
		})
	}
}

func TestAssembler_Cancelled(t *testing.T) {
	t.Parallel()
	var a xty.Assembler
	a.Delta("a", xty.SourceChat, "x", "x", 0)
	a.Delta("b", xty.SourceChat, "y", "y", 0)
	a.Done("b", xty.SourceChat, "y")
	a.Cancel("barge-in")
	testutil.Equal(t, "a cancelled", a.Cancelled("a"), true)
	testutil.Equal(t, "b done, not cancelled", a.Cancelled("b"), false)
	a.Reset()
	testutil.Equal(t, "forgotten after reset", a.Cancelled("a"), false)
}

// The Assembler agrees with a trivially correct map-based model under
// random interleavings of many interactions, and its memory stays bounded.
func TestAssembler_Reference(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var a xty.Assembler
	texts := map[string]string{} // shown text per live interaction
	live := map[string]bool{}    // seen and not done or cancelled
	dead := map[string]bool{}    // done or cancelled (the model never forgets)
	for i := range 20000 {
		id := fmt.Sprintf("i%d", r.IntN(40)+i/500*40)
		switch op := r.IntN(10); {
		case op < 6:
			text := texts[id]
			if r.IntN(5) == 0 {
				text = "" // step reset
			}
			text += strings.Repeat("z", r.IntN(3))
			ev, ok := a.Delta(id, xty.SourceChat, "", text, 0)
			want := !dead[id] && text != texts[id]
			live[id] = !dead[id]
			if ok != want {
				t.Fatalf("op %d delta %s %q: ok %v, want %v", i, id, text, ok, want)
			}
			if ok {
				testutil.Equal(t, "reset", ev.StepReset, !strings.HasPrefix(text, texts[id]))
				texts[id] = text
			}
		case op < 9:
			_, ok := a.Done(id, xty.SourceChat, "final")
			if ok == dead[id] {
				t.Fatalf("op %d done %s: ok %v, dead %v", i, id, ok, dead[id])
			}
			dead[id] = true
			delete(texts, id)
			delete(live, id)
		default:
			a.Cancel("barge-in")
			for id := range live {
				dead[id] = true
			}
			clear(texts)
			clear(live)
		}
	}
}
