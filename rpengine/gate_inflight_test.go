package rpengine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// Issue #15, item 2: the gate counts the requests the game sent that no
// capacity.update reflects yet. The engine here takes a millisecond (fake
// time) to accept each request, so the game sends the next ones before
// the last capacity.update counts the earlier ones; a gate that read only
// that update sent past the engine's limit of 20, which refused the
// excess (and the game sent it again). 100 concurrent Reply calls, 20
// characters, all complete, each sent once. TestTransports_hundredConcurrentReplies
// cannot see this: in its synctest bubble every request is accepted
// before the next one is made.
func TestTransports_hundredRepliesInFlight(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		release := make(chan struct{})
		l := tr.start(t, nil, &enginetest.Options{
			Faults: enginetest.Faults{Delay: time.Millisecond},
			Responder: func(r enginetest.Request) enginetest.Script {
				<-release // the engine's worker waits: its queue fills up
				return enginetest.Script{Sentences: []string{"Yes."}}
			}})
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
		}()
		ctx := ctxT(t)
		c := testCard(t)
		s := &submitter{t: t, srv: l.srv}
		var results []<-chan error
		for i := 0; i < 100; i++ {
			req := textReq(c, fmt.Sprint(i))
			req.CharacterID = fmt.Sprint("c", i%20)
			results = append(results, s.submit(ctx, req))
		}
		_, err := l.eng.WaitFor(ctx, func(enginetest.Message) bool { return len(received(t, l.eng)) >= 20 })
		testutil.Success(t, err)
		time.Sleep(time.Second) // fake time: anything sent past the limit arrives
		testutil.Equal(t, "requests sent while the engine holds 20", len(received(t, l.eng)), 20)
		close(release)
		for i, got := range results {
			if err := <-got; err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		}
		testutil.Equal(t, "each request sent once", len(received(t, l.eng)), 100)
		if strings.Contains(l.log.String(), "refused a request for capacity") {
			t.Error("the engine refused a request for capacity")
		}
	})
}
