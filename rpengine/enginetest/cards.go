package enginetest

import (
	"encoding/json"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

type cardKey struct{ integration, character string }

type cachedCard struct {
	doc  []byte
	hash string
}

type transfer struct {
	Mode       string          `json:"mode"`
	Snapshot   json.RawMessage `json:"snapshot"`
	BaseHash   string          `json:"baseHash"`
	Patch      json.RawMessage `json:"patch"`
	TargetHash *string         `json:"targetHash"`
}

// cardError is a request.error code and message about a card.
type cardError struct{ code, message string }

func resyncErr(msg string) *cardError { return &cardError{"card_resync_required", msg} }

// resolveCard applies a transfer descriptor to the session's card cache,
// as upstream's engine does, and returns the accepted hash.
func (cn *conn) resolveCard(k cardKey, raw json.RawMessage) (string, *cardError) {
	var t transfer
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", &cardError{"invalid_payload", err.Error()}
	}
	if t.Mode != "snapshot" && cn.takeForcedResync() {
		cn.mu.Lock()
		delete(cn.cards, k)
		cn.mu.Unlock()
		return "", resyncErr("forced by enginetest: card cache lost")
	}
	cn.mu.Lock()
	base, cached := cn.cards[k]
	cn.mu.Unlock()
	doc := []byte(t.Snapshot)
	switch t.Mode {
	case "reference":
		if !cached || t.TargetHash == nil || base.hash != *t.TargetHash {
			return "", resyncErr("referenced card is not cached in this session")
		}
		return base.hash, nil
	case "patch":
		if !cached {
			return "", resyncErr("patch base is not cached in this session")
		}
		if base.hash != t.BaseHash {
			return "", resyncErr("patch base hash does not match the cached card")
		}
		var err error
		if doc, err = card.ApplyPatch(base.doc, t.Patch); err != nil {
			return "", resyncErr("patch failed: " + err.Error())
		}
	}
	c, err := card.Parse(doc)
	if err != nil {
		return "", &cardError{"invalid_character_card", "Invalid Character Card V2: " + err.Error()}
	}
	if err := c.Validate(); err != nil {
		return "", &cardError{"invalid_character_card", "Invalid Character Card V2: " + err.Error()}
	}
	h, err := cn.hash(doc, c)
	if err != nil {
		return "", &cardError{"invalid_character_card", err.Error()}
	}
	if t.TargetHash != nil && *t.TargetHash != h {
		return "", resyncErr("rebuilt card hash differs from targetHash")
	}
	cn.mu.Lock()
	cn.cards[k] = cachedCard{doc: doc, hash: h}
	cn.mu.Unlock()
	return h, nil
}

func (cn *conn) hash(doc []byte, c *card.Card) (string, error) {
	if cn.faults().UpstreamHash {
		return UpstreamHash(doc)
	}
	return c.Hash().String(), nil
}

func (cn *conn) takeForcedResync() bool {
	e := cn.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.ForceResync > 0 {
		e.faults.ForceResync--
		return true
	}
	return false
}

// CardHash returns the hash the engine has cached for a character in the
// current session.
func (e *Engine) CardHash(integrationID, characterID string) (string, bool) {
	cn := e.current()
	if cn == nil {
		return "", false
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	c, ok := cn.cards[cardKey{integrationID, characterID}]
	return c.hash, ok
}
