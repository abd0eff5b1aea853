package xiaotangyuan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// MaxRoleInstructions is the limit on [ChatContext.RoleInstructions], in
// UTF-16 code units (the Harness measures JavaScript string length, so a
// character outside the BMP counts twice).
const MaxRoleInstructions = wire.MaxRoleInstructions

// ChatContext is the optional structured context of chat.send, chat.retry
// and assistant.compose. Empty strings are omitted, as the Harness would
// treat them as absent anyway. The zero value sends no context.
type ChatContext struct {
	RoleInstructions string // at most MaxRoleInstructions UTF-16 units, after trimming
	PlayerName       string
	Location         string
	Date             string
	Time             string
	NearbyNPC        string
	SaveID           string // see ValidateSaveID; sets the Harness's latest save for this connection
	Observation      any    // must encode to a JSON object; nil omits it
}

// wire validates c and returns its wire form, or nil for a nil or empty c.
func (c *ChatContext) wire() (*wire.Context, error) {
	if c == nil {
		return nil, nil
	}
	// Trimmed as the Harness trims (JavaScript's trim), and measured
	// after trimming, as the Harness does: the trimmed text is what is
	// sent.
	if n := utf16Len(wire.Trim(c.RoleInstructions)); n > MaxRoleInstructions {
		return nil, &ValidationError{Field: "context.roleInstructions", Reason: fmt.Sprintf("%d UTF-16 units, limit %d", n, MaxRoleInstructions)}
	}
	save, err := trimSaveID("context.saveId", c.SaveID)
	if err != nil {
		return nil, err
	}
	w := &wire.Context{
		RoleInstructions: wire.Trim(c.RoleInstructions),
		PlayerName:       wire.Trim(c.PlayerName),
		Location:         wire.Trim(c.Location),
		Date:             wire.Trim(c.Date),
		Time:             wire.Trim(c.Time),
		NearbyNPC:        wire.Trim(c.NearbyNPC),
		SaveID:           save,
	}
	if c.Observation != nil {
		obs, err := encodeObject("context.observation", c.Observation)
		if err != nil {
			return nil, err
		}
		w.Observation = obs
	}
	if w.Observation == nil && w.RoleInstructions+w.PlayerName+w.Location+w.Date+w.Time+w.NearbyNPC+w.SaveID == "" {
		return nil, nil
	}
	return w, nil
}

// encodeObject marshals v and checks that it is a JSON object.
func encodeObject(field string, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &ValidationError{Field: field, Reason: err.Error()}
	}
	if !bytes.HasPrefix(b, []byte("{")) {
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("must encode to a JSON object, got %.20s", b)}
	}
	return b, nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
