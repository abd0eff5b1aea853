package rpengine

import (
	"context"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/card"
)

// SyncCharacter gives the engine a character's card ahead of its first
// request (character.sync), so that the request sends only a reference,
// and waits, bounded by ctx, for the engine to accept it; it returns the
// hash the engine accepted. integrationID and characterID are those of
// later requests. The card goes as a snapshot, patch or reference as the
// session's engine holds, and card_resync_required is retried with a
// snapshot. It waits for an engine (unless FailFast), not for room in its
// queue: the engine takes character.sync whatever the queue holds.
// Expiry of ctx abandons the wait, not the connection. A sync with
// neither ack nor answer fails with ErrNoAnswer after AckTimeout, one
// acked but never answered after IdleTimeout.
func (s *Server) SyncCharacter(ctx context.Context, integrationID, characterID string, c *card.Card) (_ card.Digest, err error) {
	defer errd.Wrap(&err, "rpengine: sync character")
	if err := validateTarget(integrationID, characterID, c); err != nil {
		return card.Digest{}, err
	}
	cn, err := s.acquire(ctx)
	if err != nil {
		return card.Digest{}, err
	}
	key := card.Key{IntegrationID: integrationID, CharacterID: characterID}
	id := cn.nextSync.Add(1)
	results := make(chan syncResult, 2)
	sent, err := cn.plan.transfer(key, c)
	if err == nil {
		err = ctx.Err() // not sent once ctx expired (issue #31)
	}
	if err == nil {
		err = cn.sync(id, key, c, sent, results)
	}
	if err != nil {
		cn.forgetSync(id)
		return card.Digest{}, err
	}
	// Resyncs are planned here, on the call's goroutine, so that the
	// connection's never plans.
	for n := 0; ; n++ {
		select {
		case res := <-results:
			if res.resync == nil {
				return res.hash, res.err
			}
			t, err := cn.plan.resync(key, c, sent, n, res.resync)
			if err == nil {
				err = ctx.Err()
			}
			if err == nil {
				sent = t
				err = cn.sync(id, key, c, t, results)
			}
			if err != nil {
				cn.forgetSync(id)
				return card.Digest{}, err
			}
		case <-ctx.Done():
			cn.forgetSync(id)
			return card.Digest{}, ctx.Err()
		}
	}
}
