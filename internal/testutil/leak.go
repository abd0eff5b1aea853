package testutil

import (
	"testing"

	"go.uber.org/goleak"
)

// VerifyNoLeaks runs the package's tests and then fails the run when any
// goroutine started by them is still alive. Call it from TestMain:
//
//	func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }
//
// It uses go.uber.org/goleak, which retries for a short while so that
// goroutines already on their way out are not reported.
func VerifyNoLeaks(m *testing.M) {
	goleak.VerifyTestMain(m)
}
