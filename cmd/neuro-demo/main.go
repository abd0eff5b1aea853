// Command neuro-demo is a game of tic-tac-toe that Neuro plays through the
// neuro SDK: you are X, she is O. It registers one action with a schema,
// describes the board as context, forces her choice every turn, validates
// her move (a taken cell fails, so she retries) and shows every message on
// the wire as it goes.
//
// It connects to $NEURO_SDK_WS_URL or --url, or with --fake (the default
// when neither is given) to an in-process fake Neuro from neuro/neurotest.
//
//	go run ./cmd/neuro-demo            # against the fake, you type cells 1-9
//	go run ./cmd/neuro-demo --auto     # your side plays itself
//	NEURO_SDK_WS_URL=ws://localhost:8000 go run ./cmd/neuro-demo
//
// Exit status: 0 done (or end of input), 1 Neuro unreachable or a turn
// without a move, 2 usage error, 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/cmdline"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

type config struct {
	fake     bool
	randy    bool
	url      string
	auto     bool
	games    int
	seed     uint64
	delay    time.Duration
	quiet    bool
	deadline time.Duration
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func newFlagSet(c *config) *flag.FlagSet {
	fs := cmdline.NewFlagSet("neuro-demo") // usage goes to stdout on -h; a mistake is one line on stderr
	fs.BoolVar(&c.fake, "fake", false, "play against the in-process fake Neuro (the default unless NEURO_SDK_WS_URL or --url is given)")
	fs.BoolVar(&c.randy, "randy", false, "make the fake behave like Randy, the official mock, instead of strict Neuro")
	fs.StringVar(&c.url, "url", "", "Neuro server `URL` (default $NEURO_SDK_WS_URL)")
	fs.BoolVar(&c.auto, "auto", false, "play your side automatically (first free cell) instead of reading moves from stdin")
	fs.IntVar(&c.games, "games", 1, "number of games to play, `N` of 1 or more")
	fs.Uint64Var(&c.seed, "seed", 1, "`SEED` of the fake's random choices")
	fs.DurationVar(&c.delay, "delay", 500*time.Millisecond, "the fake's `DURATION` before answering a force")
	fs.BoolVar(&c.quiet, "quiet", false, "do not show wire messages")
	fs.DurationVar(&c.deadline, "turn-timeout", 2*time.Minute, "give up on a turn of Neuro's after this `DURATION`")
	return fs
}

const usageIntro = `neuro-demo: play tic-tac-toe with Neuro-sama through the neuro SDK.

You are X, she is O. Every turn of hers is forced through the Neuro game
API; her move is validated (a taken cell is refused and she tries again),
and every message on the wire is shown.

Without a server it plays against a fake Neuro built in. To play against
the real Neuro or Randy (the official mock), set NEURO_SDK_WS_URL or give
--url.

Usage:
  neuro-demo [flags]

  neuro-demo                          you type cells 1-9, against the fake
  neuro-demo --auto --games 3         your side plays itself
  neuro-demo --randy                  the fake behaves like Randy
  neuro-demo --url ws://localhost:8000

Flags:
`

const usageOutro = `
Exit status: 0 done (or end of input), 1 Neuro unreachable or a turn
without a move, 2 usage error, 130 interrupted.
`

// parseFlags parses args; errors are flag.ErrHelp after the usage, or a
// mistake (*usageError or cmdline's).
func parseFlags(args []string, getenv func(string) string, stdout io.Writer) (config, error) {
	var c config
	fs := newFlagSet(&c)
	set, err := cmdline.Parse(fs, args, func() { cmdline.WriteUsage(stdout, fs, usageIntro, usageOutro) })
	if err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, usagef("unexpected argument %q", fs.Arg(0))
	case c.fake && set["url"]:
		return c, usagef("--fake and --url: pick one (the fake needs no URL)")
	case set["url"] && c.url == "":
		return c, usagef("--url is empty")
	case c.games < 1:
		return c, usagef("--games %d: want 1 or more", c.games)
	case c.delay < 0:
		return c, usagef("--delay %v: want 0 or more", c.delay)
	case c.deadline <= 0:
		return c, usagef("--turn-timeout %v: want a positive duration such as 2m", c.deadline)
	}
	if !set["url"] {
		c.url = getenv("NEURO_SDK_WS_URL")
	}
	if !set["fake"] {
		c.fake = c.url == ""
	}
	if !c.fake {
		for _, f := range []string{"randy", "seed", "delay"} {
			if set[f] {
				return c, usagef("--%s is for the fake, but neuro-demo connects to %s; drop --%s, or add --fake", f, c.url, f)
			}
		}
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, err := parseFlags(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		cmdline.Usage(stderr, "neuro-demo", err.Error())
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	out := &syncWriter{w: stdout}
	errw := &syncWriter{w: stderr}
	err = play(ctx, cfg, stdin, out, errw)
	switch {
	case err == nil, errors.Is(err, errEndOfInput):
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintln(errw, "neuro-demo: interrupted")
		return exitInterrupted
	}
	fmt.Fprintf(errw, "neuro-demo: %v\n", err)
	return exitFailed
}

// play runs the games. Its errors say what went wrong and what to do.
func play(ctx context.Context, cfg config, stdin io.Reader, out, errw io.Writer) error {
	dialErrs := make(chan *neuro.DialError, 1)
	opts := &neuro.Options{URL: cfg.url, Prefix: "tictactoe_",
		HandshakeTimeout: 5 * time.Second, // a server that does not answer is reported within seconds
		Logger:           slog.New(&warnings{w: errw, dialErrs: dialErrs})}
	wire := &wireLog{w: out}
	if !cfg.quiet {
		opts.Recorder = wire
	}
	if cfg.fake {
		mode := neurotest.Strict
		if cfg.randy {
			mode = neurotest.Randy
		}
		srv := neurotest.NewServer(&neurotest.Options{Mode: mode, Seed: cfg.seed, Delay: cfg.delay})
		defer srv.Close()
		opts.URL, opts.HTTPClient = srv.URL, srv.Client() // in memory: no port to open
		fmt.Fprintf(out, "Playing against the fake Neuro (seed %d).\n", cfg.seed)
	} else {
		fmt.Fprintf(out, "Connecting to %s.\n", cfg.url)
	}
	c, err := neuro.New("Tic-Tac-Toe", opts)
	if err != nil {
		return err
	}
	defer c.Close()
	g := &game{c: c, out: out, auto: cfg.auto, in: newLineReader(stdin), turnTimeout: cfg.deadline, url: cfg.url, dialErrs: dialErrs}
	if err := c.Register(g.placeAction()); err != nil {
		return err
	}
	if err := c.Connect(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unreachable(cfg.url, err)
	}
	for i := 0; i < cfg.games; i++ {
		if err := g.play(ctx); err != nil {
			if errors.Is(err, errEndOfInput) {
				// The recorder writes on a goroutine of its own, and what it
				// still holds would follow the last line (Issue #32).
				wire.stop()
				fmt.Fprintln(out, "\nEnd of input: stopping here.")
			}
			return err
		}
	}
	// Let the last context leave before closing.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Flush(fctx); err != nil {
		fmt.Fprintf(errw, "neuro-demo: the last messages may not have reached Neuro (%v)\n", err)
	}
	return nil
}

// syncWriter serializes writes from the game loop, the SDK's recorder and
// its logger.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// unreachable explains a failed first connection and what to do.
func unreachable(url string, err error) error {
	var de *neuro.DialError
	if errors.As(err, &de) {
		err = de.Err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cannot reach Neuro at %s: %v\n", url, err)
	b.WriteString("  Start the Neuro server (or Randy) there, or point --url or NEURO_SDK_WS_URL\n")
	b.WriteString("  at the right address; with neither, neuro-demo plays against its built-in fake.")
	return errors.New(b.String())
}

// warnings is the SDK's logger: the first failed reconnect attempt of an
// outage goes to dialErrs, for the game loop to tell the player; any other
// warning is printed as one line; debug and info lines are dropped.
type warnings struct {
	w        io.Writer
	dialErrs chan<- *neuro.DialError
}

func (h *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnings) Handle(_ context.Context, r slog.Record) error {
	var err error
	r.Attrs(func(a slog.Attr) bool {
		if e, ok := a.Value.Any().(error); ok && a.Key == "err" {
			err = e
		}
		return true
	})
	var de *neuro.DialError
	if errors.As(err, &de) {
		select {
		case h.dialErrs <- de:
		default:
		}
		return nil
	}
	if err == nil {
		err = errors.New(r.Message)
	}
	_, werr := fmt.Fprintf(h.w, "neuro-demo: warning: %s\n", peertext.Clip(err.Error(), peertext.LineBytes)) // may quote Neuro (issue #16)
	return werr
}

func (h *warnings) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *warnings) WithGroup(string) slog.Handler      { return h }
