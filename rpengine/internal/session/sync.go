package session

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

type syncedPayload struct {
	SourceMessageID string `json:"sourceMessageId"`
	IntegrationID   string `json:"integrationId"`
	CharacterID     string `json:"characterId"`
	TargetHash      string `json:"targetHash"`
}

// Sync records an attempt of the character sync id (a SyncCharacter
// call's, never 0) of c under key, whose message msgID the game encoded
// and is about to write. The first attempt starts the sync's idle
// timeout, which spans its resyncs: an acked sync the engine never
// answers must not wait for ever when the call's ctx has no deadline
// (issue #9).
func (s *Session) Sync(now time.Time, id uint64, key card.Key, c *card.Card, msgID string) error {
	if s.ended {
		return ErrEnded
	}
	op := s.syncs[id]
	if op == nil {
		op = &syncOp{id: id, key: key, card: c}
		if d := s.cfg.IdleTimeout; d > 0 {
			op.idle = now.Add(d)
		}
		s.syncs[id] = op
	}
	delete(s.syncMsgs, op.msg)
	op.msg = msgID
	s.syncMsgs[msgID] = op
	s.out.add(now, s.cfg.AckTimeout, &outMsg{id: msgID, typ: wire.TypeCharacterSync, owner: owner{sync: id}})
	return nil
}

// ForgetSync drops the sync id, whose call gave up.
func (s *Session) ForgetSync(id uint64) {
	if op := s.syncs[id]; op != nil {
		delete(s.syncMsgs, op.msg)
		delete(s.syncs, id)
	}
}

// endSync ends op with h, or f.
func (s *Session) endSync(op *syncOp, h card.Digest, f *Failure) {
	s.ForgetSync(op.id)
	s.emit(Output{Kind: OutSync, SyncID: op.id, Hash: h, Failure: f})
}

// syncError takes a request.error for op: card_resync_required goes back
// to the waiting SyncCharacter call, anything else ends it.
func (s *Session) syncError(op *syncOp, f *wire.Failed) {
	op.answered = true
	fl := &Failure{Kind: FailEngine, Code: f.Code, Message: f.Message, Retryable: f.Retryable, SourceMessageID: f.SourceMessageID}
	if f.Code != "card_resync_required" {
		s.endSync(op, card.Digest{}, fl)
		return
	}
	delete(s.syncMsgs, op.msg) // its answer came; the resend registers anew
	s.emit(Output{Kind: OutSync, SyncID: op.id, Decision: Resync, Failure: fl})
}

func (s *Session) onSynced(m syncedPayload) {
	op := s.syncMsgs[m.SourceMessageID]
	if op == nil {
		s.log(slog.LevelDebug, "rpengine: character.synced for no pending sync", "sourceMessageId", peertext.Clip(m.SourceMessageID, peertext.LogBytes))
		return
	}
	op.answered = true
	h, err := card.ParseDigest(m.TargetHash)
	if err != nil {
		s.endSync(op, card.Digest{}, &Failure{Kind: FailBadAnswer, Detail: fmt.Sprintf("engine sent a bad targetHash %q", m.TargetHash), Err: err})
		return
	}
	s.emit(Output{Kind: OutCard, Key: op.key, Card: op.card, Hash: h})
	s.endSync(op, h, nil)
}
