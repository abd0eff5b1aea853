package xiaotangyuan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

var (
	saveIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	atomPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{2,79}$`)
)

// SaveID returns the opaque save identifier the reference adapters send:
// the lowercase hex SHA-256 of game + ":" + raw (DST hashes "dst:" +
// save id, ONI "oni:" + colony GUID). raw may be a save path or slot name:
// only its hash leaves the process, as the protocol requires.
func SaveID(game, raw string) string {
	sum := sha256.Sum256([]byte(game + ":" + raw))
	return hex.EncodeToString(sum[:])
}

// ValidateSaveID returns a [*ValidationError] unless id matches
// ^[A-Za-z0-9._:-]{1,128}$. Unlike the Harness it does not trim: an id
// with spaces is refused rather than silently altered.
func ValidateSaveID(id string) error {
	return validateSaveID("saveId", id)
}

func validateSaveID(field, id string) error {
	if !saveIDPattern.MatchString(id) {
		return &ValidationError{Field: field, Reason: fmt.Sprintf("%q must be 1-128 characters of [A-Za-z0-9._:-]", id)}
	}
	return nil
}

// validateAtomName checks an atom name against the gateway's pattern, and
// refuses the assistant.* and speech.* names, which the gateway treats as
// protocol features and never calls as atoms (PROTOCOL.md, "Atoms").
func validateAtomName(name string) error {
	if !atomPattern.MatchString(name) {
		return &ValidationError{Field: "atom", Reason: fmt.Sprintf("%q must match ^[a-z0-9][a-z0-9._-]{2,79}$", name)}
	}
	if strings.HasPrefix(name, "assistant.") || strings.HasPrefix(name, "speech.") {
		return &ValidationError{Field: "atom", Reason: fmt.Sprintf("%q starts with assistant. or speech.: the Harness takes such names for protocol features and never calls them as atoms; choose another prefix, such as your game id", name)}
	}
	return nil
}
