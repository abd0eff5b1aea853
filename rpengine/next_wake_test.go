package rpengine

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #17: Reply.Next with concurrent consumers, which the docs allow.
// Five consumers, more than the events that end the reply, so that some
// of them get none of those and must still see the end; and the events
// of one push are all taken at once, not one per later push. (With three
// consumers and three closing events, TestReply_Next_concurrentConsumers
// passed without the wait on the reply's end.)
func TestReply_Next_moreConsumersThanEvents(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{IdleTimeout: -1, AckTimeout: -1})
		r := u.request(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1", Voice: "F1"})
		u.accept()
		u.in("reply.audio.start", audioStartOf("r1"))
		const consumers = 5
		var taken atomic.Int64
		ended := make(chan error, consumers)
		for range consumers {
			go func() {
				for {
					if _, err := r.Next(context.Background()); err != nil {
						ended <- err
						return
					}
					taken.Add(1)
				}
			}()
		}
		synctest.Wait() // all five wait
		// Three segments in one push (the first chunk arrives last).
		u.in("reply.audio.chunk", chunkOf(1, 1, 441))
		u.in("reply.audio.chunk", chunkOf(2, 2, 441))
		u.in("reply.audio.chunk", chunkOf(0, 0, 441))
		synctest.Wait()
		testutil.Equal(t, "segments taken before anything else arrives", taken.Load(), int64(3))
		u.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text", "audio"}})
		synctest.Wait()
		for range consumers {
			select {
			case err := <-ended:
				testutil.ErrorIs(t, err, io.EOF)
			default:
				t.Fatal("a consumer still waits after the reply ended")
			}
		}
		// Three segments, the end of the speech, an anomaly (no
		// reply.audio.completed) and the end.
		testutil.Equal(t, "events taken once each", taken.Load(), int64(6))
	})
}
