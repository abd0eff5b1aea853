package errd

import (
	"errors"
	"io"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestWrap(t *testing.T) {
	t.Parallel()
	sentinel := errors.New("card: bad op")
	for _, tc := range []struct {
		name string
		msg  string
		err  error
		want string
	}{
		{"nil stays nil", "card: apply", nil, ""},
		{"foreign cause kept whole", "card: apply", io.EOF, "card: apply: EOF"},
		{"own prefix said once", "card: apply", sentinel, "card: apply: bad op"},
		{"twice wrapped", "card: apply", func() error { err := error(sentinel); Wrap(&err, "card: patch"); return err }(), "card: apply: patch: bad op"},
		{"other package's prefix kept", "rpengine: reply", sentinel, "rpengine: reply: card: bad op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.err
			Wrap(&err, tc.msg)
			if tc.err == nil {
				testutil.Equal(t, "err", err, nil)
				return
			}
			testutil.Equal(t, "text", err.Error(), tc.want)
			testutil.ErrorIs(t, err, tc.err)
		})
	}
}

func TestChain(t *testing.T) {
	t.Parallel()
	busy := errors.New("rpengine: engine is not accepting requests")
	refused := errors.New("rpengine: engine refused request")
	err := Chain(busy, refused)
	testutil.Equal(t, "text", err.Error(), "rpengine: engine is not accepting requests: engine refused request")
	testutil.ErrorIs(t, err, busy)
	testutil.ErrorIs(t, err, refused)
	testutil.Equal(t, "foreign cause", Chain(busy, io.EOF).Error(), "rpengine: engine is not accepting requests: EOF")
	Wrap(&err, "rpengine: reply")
	testutil.Equal(t, "wrapped", err.Error(), "rpengine: reply: engine is not accepting requests: engine refused request")
}
