package mailbox

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Issue #31, item 1: the acks kept for a retry after a failed write are
// bounded in bytes as well as in count. An ack holds the engine's
// messageId; one past maxAckRetryBytes is not kept (the engine's file
// stays, as past maxAckRetries), a small one still is.
func TestServer_ackRetriesBoundedInBytes(t *testing.T) {
	t.Parallel()
	dir := testutil.TempDir(t)
	m := New(nil, Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	m.root.Store(root)
	defer m.Close()
	// A file in the outbox's place cannot be written into, even by root.
	testutil.Success(t, os.WriteFile(filepath.Join(dir, ToEngine), nil, 0o600))
	for i, id := range []string{strings.Repeat("x", maxAckRetryBytes), "small"} {
		msg, err := wire.Encode(wire.TypeAck, "a"+string(rune('0'+i)), "", time.Unix(0, 0), wire.Ack{AcknowledgedMessageID: id})
		testutil.Success(t, err)
		testutil.Error(t, m.write(msg))
	}
	testutil.Equal(t, "acks kept for a retry", len(m.retry), 1)
	testutil.Equal(t, "bytes kept", held(m.retry) < 1<<10, true)
}
