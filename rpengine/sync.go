package rpengine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// maxResyncs bounds card_resync_required retries of one request; the
// planner already never offers the same failing transfer twice.
const maxResyncs = 2

type syncPayload struct {
	IntegrationID string        `json:"integrationId"`
	CharacterID   string        `json:"characterId"`
	Card          card.Transfer `json:"card"`
}

type syncedPayload struct {
	SourceMessageID string `json:"sourceMessageId"`
	IntegrationID   string `json:"integrationId"`
	CharacterID     string `json:"characterId"`
	TargetHash      string `json:"targetHash"`
}

// syncOp is one SyncCharacter call in flight.
type syncOp struct {
	sess    *session
	key     card.Key
	card    *card.Card
	got     atomic.Bool
	done    chan struct{}
	resync  chan *RequestError // a card_resync_required for the waiting call
	once    sync.Once
	hash    card.Digest
	err     error
	mu      sync.Mutex // guards following
	sent    card.Transfer
	msgID   string
	resyncs int
}

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
	sess, err := s.acquire(ctx)
	if err != nil {
		return card.Digest{}, err
	}
	op := &syncOp{sess: sess, key: card.Key{IntegrationID: integrationID, CharacterID: characterID}, card: c,
		done: make(chan struct{}), resync: make(chan *RequestError, 1)}
	t, err := sess.plan(op.key, op.card)
	if err != nil {
		return card.Digest{}, err
	}
	if err := op.attempt(t); err != nil {
		return card.Digest{}, err
	}
	// An acked sync the engine never answers must not wait for ever when
	// ctx has no deadline (issue #9): it gets IdleTimeout, resyncs included.
	if d := s.opts.IdleTimeout; d > 0 {
		timer := time.AfterFunc(d, func() {
			op.fail(fmt.Errorf("%w: no answer to character.sync within %v", ErrNoAnswer, d))
		})
		defer timer.Stop()
	}
	for {
		select {
		case <-op.done:
			return op.hash, op.err
		case rerr := <-op.resync:
			if err := op.resend(rerr); err != nil {
				op.fail(err)
			}
		case <-ctx.Done():
			op.forget()
			return card.Digest{}, ctx.Err()
		}
	}
}

// resend sends character.sync again after card_resync_required (rerr),
// with the planner's snapshot; on the SyncCharacter call's goroutine, so
// that the reader never plans.
func (op *syncOp) resend(rerr *RequestError) error {
	op.mu.Lock()
	sent, n := op.sent, op.resyncs
	op.resyncs++
	op.mu.Unlock()
	t, err := op.sess.resync(op.key, op.card, sent, n, rerr)
	if err != nil {
		return err
	}
	return op.attempt(t)
}

// attempt sends character.sync with transfer t and registers the op under
// the new messageId.
func (op *syncOp) attempt(t card.Transfer) error {
	s := op.sess
	op.mu.Lock()
	op.sent = t
	op.mu.Unlock()
	// Register before sending so the answer cannot race the map: the id
	// is reserved by sending through a placeholder owner first.
	id, err := s.sendSync(op, syncPayload{IntegrationID: op.key.IntegrationID, CharacterID: op.key.CharacterID, Card: t})
	if err != nil {
		return err
	}
	op.mu.Lock()
	op.msgID = id
	op.mu.Unlock()
	return nil
}

// sendSync is send with the op registered under the message's id before
// the write.
func (s *session) sendSync(op *syncOp, p syncPayload) (string, error) {
	return s.sendRegistered(wire.TypeCharacterSync, p, op, func(id string) error {
		if s.ended != nil {
			return s.ended
		}
		s.syncs[id] = op
		return nil
	}, true)
}

func (op *syncOp) forget() {
	op.mu.Lock()
	id := op.msgID
	op.mu.Unlock()
	op.sess.mu.Lock()
	if op.sess.syncs[id] == op {
		delete(op.sess.syncs, id)
	}
	op.sess.mu.Unlock()
}

func (op *syncOp) answered() bool { return op.got.Load() }

func (op *syncOp) fail(err error) { op.finish(card.Digest{}, err) }

func (op *syncOp) finish(h card.Digest, err error) {
	op.once.Do(func() {
		op.hash, op.err = h, err
		close(op.done)
	})
	op.forget()
}

// handleError takes a request.error for the sync: card_resync_required
// goes back to the waiting SyncCharacter call, anything else ends it.
// Reader goroutine.
func (op *syncOp) handleError(f *wire.Failed) {
	op.got.Store(true)
	rerr := &RequestError{Code: f.Code, Message: f.Message, Retryable: f.Retryable, SourceMessageID: f.SourceMessageID}
	if f.Code != "card_resync_required" {
		op.fail(rerr)
		return
	}
	op.forget()
	select {
	case op.resync <- rerr:
	default: // one per attempt is enough
	}
}

func (s *session) onSynced(m syncedPayload) {
	s.mu.Lock()
	op := s.syncs[m.SourceMessageID]
	s.mu.Unlock()
	if op == nil {
		s.log.Debug("rpengine: character.synced for no pending sync", "sourceMessageId", peertext.Clip(m.SourceMessageID, peertext.LogBytes))
		return
	}
	op.got.Store(true)
	h, err := card.ParseDigest(m.TargetHash)
	if err != nil {
		op.fail(fmt.Errorf("rpengine: engine sent a bad targetHash %q: %w", m.TargetHash, err))
		return
	}
	s.cardAccepted(op.key, op.card, h)
	op.finish(h, nil)
}
