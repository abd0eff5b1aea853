package inspect_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }
