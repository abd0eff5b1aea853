package xiaotangyuan

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errArgsNotObject refuses game.atom.execute arguments that are not one
// JSON object; the gateway always sends an object.
var errArgsNotObject = errors.New("arguments must be a JSON object")

// checkArgs verifies that args is one JSON object, and nothing more.
//
// The skill runtime's limits (nesting 8, strings of 500 characters, 50
// array items or object keys) are deliberately not checked: the gateway
// checks them on the stored skill program, before "$name.path" references
// are replaced by earlier atoms' results, so the arguments it actually
// sends can be far larger (see docs/xiaotangyuan-protocol.md, "Atoms"; issue #20). Refusing
// them broke chained skills. What bounds memory is the read limit on the
// whole message (Options.ReadLimit).
func checkArgs(args json.RawMessage) error {
	if t := bytes.Trim(args, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return errArgsNotObject
	}
	return nil
}
