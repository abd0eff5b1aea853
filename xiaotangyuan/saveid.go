package xiaotangyuan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// SaveID returns the opaque save identifier the reference adapters send:
// the lowercase hex SHA-256 of game + ":" + raw, with raw trimmed of
// surrounding white space first, as the DST adapter does ("dst:" + save
// id; ONI hashes "oni:" + colony GUID). An empty game hashes raw alone,
// with no prefix, as the Stardew adapter hashes its game's unique id:
// SaveID("", "123456") is the id Stardew sends for unique id 123456. raw
// may be a save path or slot name: only its hash leaves the process, as
// the protocol requires.
//
// A blank raw (empty or only white space) gives "", meaning no save: the
// DST adapter then sends no saveId, and "" clears the save in
// Options.SaveID and [Client.SetSaveID].
func SaveID(game, raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if game != "" {
		raw = game + ":" + raw
	}
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// ValidateSaveID returns a [*ValidationError] unless id, trimmed of
// white space as the Harness trims it (JavaScript's String.prototype.trim),
// matches ^[A-Za-z0-9._:-]{1,128}$, the Harness's own rule: " slot-1 "
// is valid. The client sends every saveId trimmed, so that the hello and
// a chat's context name the same save.
func ValidateSaveID(id string) error {
	t, err := trimSaveID("saveId", id)
	if err == nil && t == "" {
		err = &ValidationError{Field: "saveId", Reason: "must not be blank"}
	}
	return err
}

// trimSaveID returns id trimmed as the Harness trims it, and checked: ""
// when it is blank, which the Harness takes as no saveId (issue #33).
func trimSaveID(field, id string) (string, error) {
	id = wire.Trim(id)
	if id != "" && !wire.SaveIDPattern.MatchString(id) {
		return "", &ValidationError{Field: field, Reason: peertext.Quote(id, peertext.LogBytes) + " must be 1-128 characters of [A-Za-z0-9._:-]"}
	}
	return id, nil
}

// validateAtomName checks an atom name against the gateway's pattern, and
// refuses the assistant.* and speech.* names, which the gateway treats as
// protocol features and never calls as atoms (docs/xiaotangyuan-protocol.md, "Atoms").
func validateAtomName(name string) error {
	if !wire.AtomPattern.MatchString(name) {
		return &ValidationError{Field: "atom", Reason: fmt.Sprintf("%q must match ^[a-z0-9][a-z0-9._-]{2,79}$", name)}
	}
	if strings.HasPrefix(name, "assistant.") || strings.HasPrefix(name, "speech.") {
		return &ValidationError{Field: "atom", Reason: fmt.Sprintf("%q starts with assistant. or speech.: the Harness takes such names for protocol features and never calls them as atoms; choose another prefix, such as your game id", name)}
	}
	return nil
}
