package rpengine

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #15, item 2: requests for one character keep their submission
// order when the engine refuses one for capacity and it is sent again.
// r2 (same character as r1) is not sent while r1 waits for the engine's
// decision; had it been, the engine could accept r2 and refuse r1, and
// r1's retry would reach the engine after r2.
func TestSession_capacityRetryKeepsCharacterOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, nil)
		ctx := context.Background()
		req := func(id string) ReplyRequest {
			return ReplyRequest{IntegrationID: "g", CharacterID: "a", Card: u.card, Text: id, RequestID: id}
		}
		u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		r1 := u.request(ctx, req("r1"))
		got := make(chan error, 1)
		go func() {
			_, err := u.srv.Reply(ctx, req("r2"))
			got <- err
		}()
		synctest.Wait()
		sent := func() []any {
			var ids []any
			for _, m := range u.ft.messages("reply.request") {
				ids = append(ids, m["requestId"])
			}
			return ids
		}
		testutil.Equal(t, "r2 waits for the engine's decision on r1", sent(), []any{"r1"})
		u.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": r1.MessageID(),
			"code": "capacity_exceeded", "message": "the engine queue is full", "retryable": true})
		u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		synctest.Wait()
		testutil.Equal(t, "r1 sent again, r2 still waits", sent(), []any{"r1", "r1"})
		u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 1})
		synctest.Wait()
		testutil.Equal(t, "order", sent(), []any{"r1", "r1", "r2"})
		u.end(ErrConnectionLost)
		<-got
	})
}
