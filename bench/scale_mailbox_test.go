package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// BenchmarkScaleMailboxInbox is the mailbox row of the scaling table: a
// game that starts on a mailbox folder whose inbox (engine-to-integration)
// holds n files, at n, 4n and 16n. They are what an engine left there for
// a game that was not running: n messages of an old session, each read,
// acknowledged (the engine deletes its files only once acked) and
// dropped, then the engine's hello, answered with welcome. One operation
// is Start (the folder exists already; one audio slot, so that the
// slots' fixed cost does not hide the inbox's), up to the live session,
// and Close. The engine never runs, so the inbox is the same at every
// operation; what the game writes is removed again at its next start.
// Every file costs the same when nothing is quadratic. The folder is on a
// RAM disk where there is one (ramDir): what is measured is the game's
// work, not the disk's.
func BenchmarkScaleMailboxInbox(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchmarkMailboxInbox(b, n) })
	}
}

func benchmarkMailboxInbox(b *testing.B, n int) {
	dir := filepath.Join(ramDir(b), "mb")
	opts := &rpengine.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Mailbox: &rpengine.MailboxOptions{Dir: dir, IntegrationID: "bench", SlotCount: 1}}
	start := func(hello bool) {
		srv, err := rpengine.NewServer(opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		if hello {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := srv.WaitSession(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
	start(false) // the folder
	inbox := filepath.Join(dir, "engine-to-integration")
	put := func(i int, typ, fields string) {
		stem := fmt.Sprintf("%013d-m%d", 1_000_000+i, i)
		msg := fmt.Sprintf(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":%q,"messageId":"m%d",%s"timestamp":"2026-01-01T00:00:00.000Z"}`,
			typ, i, fields)
		if err := os.WriteFile(filepath.Join(inbox, stem+".json"), []byte(msg), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inbox, stem+".ready"), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		put(i, "reply.text.delta", fmt.Sprintf(`"sessionId":"old","requestId":"r","sequence":%d,"delta":"word ",`, i))
	}
	put(n, "hello", `"clientVersion":"bench",`)
	start(true) // warm up
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		start(true)
	}
	cpu.report(b)
}

// ramDir is a temporary folder on /dev/shm where the machine has it (Linux's
// RAM disk), else testutil.TempDir. On the CI machine's ext4 disk, creating
// a file took 0.7 ms in a folder of 100 and 1.5 ms in one of 400 or more
// (the file system's cost, not ours: it made the inbox row's ratio 39, and
// 15.6 on /dev/shm in the same hour).
func ramDir(b *testing.B) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "gamelink-bench-")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return testutil.TempDir(b)
}
