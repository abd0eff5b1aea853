package mailbox

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// writeLockProbe is a slog.Handler that tries the mailbox's write lock
// for every record: a library lock held around the game's Logger is one
// the game's code can deadlock on.
type writeLockProbe struct {
	m    *Server
	mu   sync.Mutex
	held []string
}

func (p *writeLockProbe) Enabled(context.Context, slog.Level) bool { return true }
func (p *writeLockProbe) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *writeLockProbe) WithGroup(string) slog.Handler            { return p }
func (p *writeLockProbe) Handle(_ context.Context, rec slog.Record) error {
	if p.m.wmu.TryLock() {
		p.m.wmu.Unlock()
		return nil
	}
	p.mu.Lock()
	p.held = append(p.held, rec.Message)
	p.mu.Unlock()
	return nil
}

// Issue #30: the outbox's failure, and its end, were logged with the
// write lock held.
func TestServer_writeLogsWithoutLock(t *testing.T) {
	t.Parallel()
	dir := testutil.TempDir(t)
	probe := &writeLockProbe{}
	m := New(nil, Options{Dir: dir, Logger: slog.New(probe)})
	probe.m = m
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	m.root.Store(root)
	defer m.Close()
	out := filepath.Join(dir, ToEngine)
	testutil.Success(t, os.WriteFile(out, nil, 0o600)) // a file in its place cannot be written into, even by root
	msg, err := wire.Encode(wire.TypeAck, "a1", "", time.Unix(0, 0), wire.Ack{AcknowledgedMessageID: "x"})
	testutil.Success(t, err)
	testutil.Error(t, m.write(msg))
	testutil.Success(t, os.Remove(out))
	testutil.Success(t, os.Mkdir(out, 0o700))
	testutil.Success(t, m.write(msg))
	probe.mu.Lock()
	defer probe.mu.Unlock()
	testutil.Equal(t, "lines logged under the write lock", probe.held, []string(nil))
	testutil.Equal(t, "the failed ack waits for a retry", len(m.retry), 1)
}
