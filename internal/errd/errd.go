// Package errd wraps an error returned by an exported operation once, with
// the package and the operation's name, in a deferred call:
//
//	func Apply(...) (_ []byte, err error) {
//		defer errd.Wrap(&err, "card: apply patch")
//		...
//	}
//
// Every package of the module wraps this way, so that an error says once
// where it came from: the package prefix ("card: ") is written once, at
// the start, even when the cause's own text starts with it, and the cause
// stays reachable with errors.Is and errors.As.
package errd

import "strings"

// Wrap replaces *err, when it is not nil, with an error that reads
// "msg: cause" and unwraps to the cause. msg is "pkg: operation"; when the
// cause's text starts with the same "pkg: " prefix, the prefix is left out
// of the cause's part ("card: apply patch: bad op", never
// "card: apply patch: card: bad op"). It is meant to be deferred.
func Wrap(err *error, msg string) {
	if *err != nil {
		*err = &wrapped{msg: msg, err: *err}
	}
}

// Text returns err's text without a leading prefix, for an error that
// quotes its cause after its own prefix.
func Text(err error, prefix string) string {
	return strings.TrimPrefix(err.Error(), prefix)
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string {
	prefix := ""
	if i := strings.Index(w.msg, ": "); i >= 0 {
		prefix = w.msg[:i+2]
	}
	return w.msg + ": " + Text(w.err, prefix)
}

func (w *wrapped) Unwrap() error { return w.err }

// Chain returns an error that reads "err: cause" and unwraps to both, for
// an error of the package's own (a sentinel) caused by another; the
// cause's package prefix is left out when err's text starts with the same
// one ("rpengine: engine is not accepting requests: engine refused ...").
func Chain(err, cause error) error {
	return &chained{err: err, cause: cause}
}

type chained struct{ err, cause error }

func (c *chained) Error() string {
	msg := c.err.Error()
	prefix := ""
	if i := strings.Index(msg, ": "); i >= 0 {
		prefix = msg[:i+2]
	}
	return msg + ": " + Text(c.cause, prefix)
}

func (c *chained) Unwrap() []error { return []error{c.err, c.cause} }
