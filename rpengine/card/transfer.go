package card

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Mode of a transfer descriptor (docs/rpengine-protocol.md, "Cards and
// hashes").
type Mode int

// The transfer modes.
const (
	ModeSnapshot  Mode = iota // the whole card
	ModePatch                 // an RFC 6902 patch against a card the engine holds
	ModeReference             // the hash of a card the engine holds
)

// String returns the wire name of the mode.
func (m Mode) String() string {
	switch m {
	case ModeSnapshot:
		return "snapshot"
	case ModePatch:
		return "patch"
	case ModeReference:
		return "reference"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Transfer is the `card` field of character.sync, reply.request and
// voice.capture.start.
type Transfer struct {
	Mode       Mode
	Snapshot   *Card           // ModeSnapshot
	BaseHash   Digest          // ModePatch
	Patch      json.RawMessage // ModePatch: RFC 6902 array, verified
	TargetHash *Digest         // nil only for a snapshot of a non-hash-safe card, or retry without targetHash
}

// MarshalJSON returns the transfer descriptor a request carries, format
// "chara_card_v2". A snapshot embeds the card's bytes as parsed.
func (t Transfer) MarshalJSON() ([]byte, error) {
	b := []byte(`{"format":"chara_card_v2","mode":"`)
	b = append(b, t.Mode.String()...)
	b = append(b, '"')
	switch t.Mode {
	case ModeSnapshot:
		if t.Snapshot == nil {
			return nil, errors.New("card: snapshot transfer without a card")
		}
		b = append(b, `,"snapshot":`...)
		b = append(b, t.Snapshot.raw...)
	case ModePatch:
		if len(t.Patch) == 0 {
			return nil, errors.New("card: patch transfer without a patch")
		}
		b = append(b, `,"baseHash":"`...)
		b = append(b, t.BaseHash.String()...)
		b = append(b, `","patch":`...)
		b = append(b, t.Patch...)
	case ModeReference:
	default:
		return nil, fmt.Errorf("card: unknown transfer mode %d", int(t.Mode))
	}
	if t.TargetHash != nil {
		b = append(b, `,"targetHash":"`...)
		b = append(b, t.TargetHash.String()...)
		b = append(b, '"')
	} else if t.Mode != ModeSnapshot {
		return nil, fmt.Errorf("card: %s transfer without targetHash", t.Mode)
	}
	return append(b, '}'), nil
}
