package card

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTooLarge is wrapped by the error returned for a document over the
// size limit.
var ErrTooLarge = errors.New("card: document too large")

// ParseError reports malformed input: invalid JSON, a duplicate key,
// invalid UTF-8, a lone surrogate, a number out of range, or a root that is
// not an object. Pointer is the RFC 6901 JSON Pointer of the value where
// the fault was found ("" is the root); Offset is its byte offset.
type ParseError struct {
	Pointer string
	Offset  int
	Msg     string
	Err     error // ErrTooLarge, or nil
}

// Unwrap returns [ErrTooLarge] for an oversized document, else nil.
func (e *ParseError) Unwrap() error { return e.Err }

// Error formats the fault with its pointer and byte offset.
func (e *ParseError) Error() string {
	return fmt.Sprintf("card: parse: %s at %q (byte %d)", e.Msg, e.Pointer, e.Offset)
}

// ValidationError lists every Character Card V2 rule a card breaks (the
// engine's validator's rules), in document order of the rules.
type ValidationError struct{ Violations []Violation }

// Violation is one broken rule: where (RFC 6901 JSON Pointer) and what.
type Violation struct{ Pointer, Message string }

// Error names the first three violations and counts them all; the full
// list is in Violations.
func (e *ValidationError) Error() string {
	var b strings.Builder
	noun := "violations"
	if len(e.Violations) == 1 {
		noun = "violation"
	}
	fmt.Fprintf(&b, "card: invalid character card (%d %s)", len(e.Violations), noun)
	for i, v := range e.Violations {
		if i == 3 {
			fmt.Fprintf(&b, "; ...")
			break
		}
		fmt.Fprintf(&b, "; %s: %s", v.Pointer, v.Message)
	}
	return b.String()
}

// String formats a violation as "pointer: message", the pointer "" of
// the root as "(root)".
func (v Violation) String() string { return rootOr(v.Pointer) + ": " + v.Message }

// rootOr returns ptr, or "(root)" for "".
func rootOr(ptr string) string {
	if ptr == "" {
		return "(root)"
	}
	return ptr
}

// UnsafeNumberError reports a number whose canonical form may differ
// between RFC 8785 and the engine (docs/rpengine-protocol.md, "Cards and
// hashes"): a non-integer, an
// exponent, negative zero, or an integer beyond ±2^53.
type UnsafeNumberError struct {
	Pointer string // where the number is
	Literal string // the number as written
}

// Error names the number and where it is.
func (e *UnsafeNumberError) Error() string {
	return fmt.Sprintf("card: not hash-safe: number %s at %q may canonicalize differently in the engine", e.Literal, e.Pointer)
}

// PatchError reports an RFC 6902 operation that is malformed or does not
// apply. Index is the operation's position in the patch (-1 when the patch
// as a whole is at fault).
type PatchError struct {
	Index int    // position of the operation in the patch, or -1
	Op    string // the operation's op member
	Path  string // the operation's path member, as given
	Err   error  // the fault
}

// Error names the operation (index, op and path) and the fault.
func (e *PatchError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("card: patch: %v", e.Err)
	}
	return fmt.Sprintf("card: patch op %d (%s %q): %v", e.Index, e.Op, e.Path, e.Err)
}

// Unwrap returns the underlying fault.
func (e *PatchError) Unwrap() error { return e.Err }

// ResyncError is returned by [Planner.Resync] when no retry can succeed:
// the engine refused a snapshot sent without targetHash, so it cannot be
// a hash disagreement and resending would loop.
type ResyncError struct {
	Key    Key
	Reason string
}

// Error names the key and why no retry can succeed.
func (e *ResyncError) Error() string {
	return fmt.Sprintf("card: resync of %s/%s impossible: %s", e.Key.IntegrationID, e.Key.CharacterID, e.Reason)
}
