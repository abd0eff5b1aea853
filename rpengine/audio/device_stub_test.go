//go:build !cgo

package audio

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestOpen_noCgo(t *testing.T) {
	t.Parallel()
	_, err := OpenDevice(nil)
	testutil.ErrorIs(t, err, ErrNoDevice)
	_, err = OpenRecorder(nil)
	testutil.ErrorIs(t, err, ErrNoDevice)
}
