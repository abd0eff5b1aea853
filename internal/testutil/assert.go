// Package testutil holds the small test helpers every package shares: five
// assertions (instead of a testify dependency), a goroutine-leak check for
// TestMain, and the location of the shared reference material.
package testutil

import (
	"errors"
	"reflect"
	"testing"
)

// Equal fails the test when got and want are not deeply equal.
func Equal[T any](tb testing.TB, name string, got, want T) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("%s: got %#v, want %#v", name, got, want)
	}
}

// Success fails the test when err is not nil.
func Success(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("unexpected error: %+v", err)
	}
}

// Error fails the test when err is nil.
func Error(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		tb.Fatal("expected an error, got nil")
	}
}

// ErrorIs fails the test when errors.Is(err, target) is false.
func ErrorIs(tb testing.TB, err, target error) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("error %v does not match %v", err, target)
	}
}

// ErrorAs fails the test when errors.As(err, target) is false.
func ErrorAs(tb testing.TB, err error, target any) {
	tb.Helper()
	if !errors.As(err, target) {
		tb.Fatalf("error %v (%T) is not a %T", err, err, target)
	}
}
