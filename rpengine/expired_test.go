package rpengine

import (
	"context"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #31, item 8: a request whose ctx has expired is not sent, even
// when the engine has room for it (the gate admits it at once): the
// engine would start the model, then get request.cancel. Nor is a
// character.sync.
func TestServer_expiredContextNotSent(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := u.srv.Reply(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1"})
	testutil.ErrorIs(t, err, context.Canceled)
	_, err = u.srv.Capture(ctx, CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, RequestID: "c1"})
	testutil.ErrorIs(t, err, context.Canceled)
	_, err = u.srv.SyncCharacter(ctx, "g", "c", u.card)
	testutil.ErrorIs(t, err, context.Canceled)
	// A live request afterwards: everything before it was written first.
	u.reply(context.Background())
	for _, typ := range []string{"voice.capture.start", "character.sync", "request.cancel"} {
		testutil.Equal(t, typ+" sent", len(u.ft.messages(typ)), 0)
	}
	testutil.Equal(t, "requests sent", len(u.ft.messages("reply.request")), 1)
}
