// Package errd wraps an error returned by an exported operation once, with
// the operation's name, in a deferred call:
//
//	func Apply(...) (_ []byte, err error) {
//		defer errd.Wrap(&err, "card: apply patch")
//		...
//	}
package errd

import "fmt"

// Wrap replaces *err with "msg: *err" (wrapping it with %w) when *err is
// not nil. It is meant to be deferred.
func Wrap(err *error, msg string) {
	if *err != nil {
		*err = fmt.Errorf("%s: %w", msg, *err)
	}
}
