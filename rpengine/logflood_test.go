package rpengine_test

// Issue #16: log flooding. Every value taken from a peer is bounded and
// escaped in every line the library logs, whatever the game's log handler
// does with it (the handler here writes values raw, as a careless one
// would), and a flood of one line is counted instead of logged.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// rawHandler writes "LEVEL msg key=value..." lines with values as they
// are: it escapes nothing, so anything a peer smuggled into a value would
// reach the log raw.
type rawHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h *rawHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *rawHandler) WithGroup(string) slog.Handler            { return h }
func (h *rawHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &rawHandler{w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *rawHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	write := func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteString("\n")
	_, err := io.WriteString(h.w, b.String())
	return err
}

// checkLog fails unless what was logged since mark is under max bytes and
// holds no control character but the line ends.
func checkLog(t *testing.T, f *fixture, mark, max int) {
	t.Helper()
	got := f.log.since(mark)
	if len(got) > max {
		t.Errorf("%d bytes logged, want at most %d:\n%.2000s", len(got), max, got)
	}
	for i, r := range got {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\uFFFD' {
			t.Fatalf("log holds %q at byte %d:\n%.2000s", r, i, got)
		}
	}
}

// newRawLogServer is a server whose log handler writes values raw. Its
// handshake timeout is long: megabytes of JSON take seconds to decode
// under the race detector on a busy machine.
func newRawLogServer(t *testing.T) *fixture {
	lb := &logBuf{}
	f := newServer(t, &rpengine.ServerOptions{Logger: slog.New(&rawHandler{w: lb}), HandshakeTimeout: time.Minute})
	f.log = lb
	return f
}

// ctxMinute bounds a step of these tests as waitLog does, by a minute:
// decoding the previous message of megabytes, which a write or a reply
// waits for, took over ctxT's 20 s under -race on a loaded machine.
func ctxMinute(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitLog waits, up to a minute, until the log written after mark
// contains sub.
func waitLog(t *testing.T, f *fixture, mark int, sub string) {
	t.Helper()
	for i := 0; i < 6000; i++ {
		if strings.Contains(f.log.since(mark), sub) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log has no %q after the case:\n%.2000s", sub, f.log.since(mark))
}

// Issue #16: ten 7 MiB foreign sessionIds wrote 73 MB of log, a 4 MiB
// resolvedCardHash was logged whole, and ESC sequences reached the log
// raw. Each message below is at most a few hundred bytes of log now.
func TestHostile_logBounded(t *testing.T) {
	t.Parallel()
	esc := "\x1b]0;owned\x07\x1b[2J\u009b31m\u202e"
	huge := func(n int) string { return esc + strings.Repeat("A", n) }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	env := func(typ, id, sid, rest string) []byte {
		return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":` + q(typ) + `,"messageId":` + q(id) +
			`,"sessionId":` + q(sid) + `,"timestamp":"t"` + rest + `}`)
	}
	n := 10
	if testutil.RaceEnabled {
		n = 3 // each takes seconds to decode under the race detector
	}
	var foreign [][]byte
	for i := 0; i < n; i++ {
		foreign = append(foreign, env("capacity.update", "fs"+strconv.Itoa(i), huge(7<<20), ""))
	}
	f := newRawLogServer(t)
	c, sid := handshake(t, f)
	requests := drain(t, c)
	tests := []struct {
		name string
		msgs [][]byte
		log  string
		max  int
	}{
		{"ten 7 MiB foreign sessionIds", foreign, "messageId=fs" + strconv.Itoa(len(foreign)-1), 10 * 1024},
		{"1 MiB messageId", [][]byte{env("future.kind", huge(1<<20), sid, "")}, "over 256 bytes", 2048},
		{"1 MiB type", [][]byte{env(huge(1<<20), "t1", sid, "")}, "ignored engine message", 1024},
		{"1 MiB protocol", [][]byte{[]byte(strings.Replace(string(env("x", "p1", sid, "")), `"gemtavern.rp_engine"`, q(huge(1<<20)), 1))}, "unsupported protocol", 1024},
		{"1 MiB protocolVersion", [][]byte{[]byte(strings.Replace(string(env("x", "v1", sid, "")), `"protocolVersion":3`,
			`"protocolVersion":[`+strings.Repeat("1,", 1<<19)+`1]`, 1))}, "unsupported protocol version", 1024},
		{"1 MiB number for a string", [][]byte{[]byte(strings.Replace(string(env("x", "n1", sid, "")), `"timestamp":"t"`,
			`"timestamp":1`+strings.Repeat("0", 1<<20), 1))}, "not a JSON object", 1024},
		{"1 MiB code and message for nobody", [][]byte{env("request.error", "e1", sid, `,"requestId":"nobody","code":`+q(huge(1<<20))+`,"message":`+q(huge(1<<20)))}, "engine error for no pending request", 1024},
		{"1 MiB number in a payload", [][]byte{env("capacity.update", "c1", sid, `,"queueDepth":1`+strings.Repeat("0", 1<<20))}, "dropped malformed engine message", 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := len(f.log.String())
			for _, m := range tt.msgs {
				// Each write waits for the server to read the message
				// before it (an in-memory pipe has no buffer).
				testutil.Success(t, c.Write(ctxMinute(t), websocket.MessageText, m))
			}
			waitLog(t, f, mark, tt.log)
			checkLog(t, f, mark, tt.max)
			hostileCases.Add(1)
		})
	}
	// A bad resolvedCardHash of 4 MiB, on a reply in flight.
	t.Run("4 MiB resolvedCardHash", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctxMinute(t))
		mark := len(f.log.String())
		req := textReq(testCard(t), "hi")
		req.RequestID = "bad-hash"
		done := make(chan error, 1)
		go func() { _, err := f.srv.Reply(ctx, req); done <- err }() // returns once accepted
		select {
		case <-requests:
		case <-ctx.Done():
			t.Fatal("no reply.request")
		}
		accepted := `,"requestId":"bad-hash","eventId":"e","queueDepth":0,"resolvedCardHash":` + q(huge(4<<20))
		testutil.Success(t, c.Write(ctx, websocket.MessageText, env("reply.accepted", "ra", sid, accepted)))
		waitLog(t, f, mark, "bad resolvedCardHash")
		checkLog(t, f, mark, 1024)
		cancel()
		<-done
		hostileCases.Add(1)
	})
	info, _ := f.srv.Session()
	testutil.Equal(t, "same session", info.ID, sid)
}

// drain reads what the server sends on c until the test ends, and signals
// each reply.request on the returned channel.
func drain(t *testing.T, c *websocket.Conn) <-chan struct{} {
	requests := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if strings.Contains(string(data), `"type":"reply.request"`) {
				select {
				case requests <- struct{}{}:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { c.CloseNow(); <-done })
	return requests
}

// Issue #16: a hello from a client that is not the session yet, with
// control characters and megabytes in the values logged.
func TestHostile_logBoundedBeforeHello(t *testing.T) {
	t.Parallel()
	huge := func(n int) string {
		b, _ := json.Marshal("\x1b]0;owned\x07\x1b[2J\u009b31m" + strings.Repeat("B", n))
		return string(b)
	}
	f := newRawLogServer(t)
	tests := []struct {
		name, hello, log string
	}{
		{"1 MiB type", strings.Replace(rawHello("a"), `"hello"`, huge(1<<20), 1), "not hello"},
		{"1 MiB protocol", strings.Replace(rawHello("b"), `"gemtavern.rp_engine"`, huge(1<<20), 1), "unsupported protocol"},
		{"1 MiB number for clientVersion", strings.Replace(rawHello("c"), `"x"`, "1"+strings.Repeat("0", 1<<20), 1), "bad hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := len(f.log.String())
			c := dialHostile(t, f)
			_ = c.Write(ctxMinute(t), websocket.MessageText, []byte(tt.hello))
			testutil.Equal(t, "close code", closeCode(t, c), websocket.StatusPolicyViolation)
			waitLog(t, f, mark, tt.log)
			checkLog(t, f, mark, 1024)
			hostileCases.Add(1)
		})
	}
}

// Issue #16: 400 refused upgrades with a 60 KiB path (each with ESC
// sequences) wrote 24 MB of log in half a second. Each line is bounded,
// and the flood is logged 50 times, then counted.
func TestHostile_refusalFloodLog(t *testing.T) {
	t.Parallel()
	f := newRawLogServer(t)
	eng := f.dial(t, nil)
	host := "127.0.0.1:" + strconv.Itoa(f.port)
	path := "/%1b]0;owned%07" + strings.Repeat("a", 60<<10)
	mark := len(f.log.String())
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for i := 0; i < 100; i++ {
				status, _ := rawRequest(t, f, upgradeReq(path, host, "Origin: "+rpengine.OriginProduction))
				if status != 404 {
					t.Errorf("status %d, want 404", status)
					return
				}
			}
		})
	}
	wg.Wait()
	waitLog(t, f, mark, "counting instead of logging")
	checkLog(t, f, mark, 64<<10)
	got := f.log.since(mark)
	testutil.Equal(t, "refusals logged", strings.Count(got, "refused connection reason="), 50)
	healthy(t, f, eng)
	// The count comes when it stops (here: at shutdown at the latest).
	testutil.Success(t, f.srv.Close())
	if !strings.Contains(f.log.since(mark), "stopped repeating line=rpengine: refused connection count=400 notLogged=350") {
		t.Errorf("no end line with the count:\n%s", tail(f.log.since(mark), 600))
	}
	hostileCases.Add(1)
}

func tail(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("...%s", s[len(s)-n:])
	}
	return s
}
