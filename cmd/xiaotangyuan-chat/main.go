// Command xiaotangyuan-chat is a terminal chat with a XiaoTangYuan
// Harness: each line you type is sent with chat.send, and the companion's
// reply streams in as it is generated. It registers one example atom,
// demo.roll_dice, that the companion can call.
//
//	xiaotangyuan-chat                 # the Harness at ws://127.0.0.1:32145
//	xiaotangyuan-chat --fake          # a built-in fake Harness (try "roll a die")
//	xiaotangyuan-chat --record t.jsonl
//
// Commands: /retry, /ping, /save NAME (switch save slot), /proactive
// (--fake only), /quit. End of input also quits.
//
// Exit status: 0 at /quit or end of input, 1 when the Harness cannot be
// reached, 2 usage error (a bad flag, or a --record file that cannot be
// written), 130 when interrupted.
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
	"syscall"

	"github.com/gamelink-go/gamelink/internal/cmdline"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1   // the Harness could not be reached, or the fake not started
	exitUsage       = 2   // a mistake in the command line
	exitInterrupted = 130 // SIGINT or SIGTERM
)

const name = "xiaotangyuan-chat"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// config is the parsed command line.
type config struct {
	url, game, save, record string
	fake                    bool
}

// usageError is a mistake in the command line; its text names the flag.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func newFlagSet(c *config) *flag.FlagSet {
	fs := cmdline.NewFlagSet(name) // --help prints usage on stdout; a mistake prints one line
	fs.StringVar(&c.url, "url", xty.DefaultURL, "Harness WebSocket `URL`, loopback only")
	fs.BoolVar(&c.fake, "fake", false, "run against a built-in fake Harness (offline)")
	fs.StringVar(&c.game, "game", "terminal", "the `ID` sent as gameId in adapter.hello")
	fs.StringVar(&c.save, "save", "", "save slot `NAME`; sent hashed as saveId, never as is")
	fs.StringVar(&c.record, "record", "", "write every message in and out to `FILE` as JSON Lines (for bug reports)")
	return fs
}

// parseFlags returns the configuration, flag.ErrHelp, or a mistake
// (*usageError or cmdline's).
func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := newFlagSet(c)
	set, err := cmdline.Parse(fs, args, nil)
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (type what to say once the chat has started)", fs.Arg(0))
	}
	if strings.TrimSpace(c.game) == "" {
		return nil, usagef("--game must not be empty")
	}
	if c.fake && set["url"] {
		return nil, usagef("--url and --fake exclude each other: --fake starts its own Harness")
	}
	return c, nil
}

const usageText = `Usage: xiaotangyuan-chat [flags]

Chat with the XiaoTangYuan (小汤圆) companion from a terminal, as a game
adapter would: each line you type is sent with chat.send and the reply
streams in. The companion may call one example game ability,
demo.roll_dice.

Try it offline first:
  xiaotangyuan-chat --fake          then type "roll a die"

Flags:
`

const commandsText = `
Commands while chatting:
  /retry        ask again for the last reply
  /ping         check that the Harness answers (it waits behind a running chat)
  /save NAME    switch to save slot NAME (reconnects: the hello carries the save)
  /proactive    make the companion speak unprompted (--fake only)
  /quit         leave; end of input (Ctrl-D) also does

Exit status: 0 at /quit or end of input, 1 when the Harness cannot be
reached, 2 usage error (a bad flag, or a --record file that cannot be
written), 130 when interrupted.
`

// usage writes the help text, every flag included.
func usage(w io.Writer) {
	cmdline.WriteUsage(w, newFlagSet(&config{}), usageText, "  -h, --help\n        show this help\n"+commandsText)
}

// run is the whole program; it returns the exit status.
func run(args []string, in io.Reader, out, errOut io.Writer) int {
	cfg, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(out)
		return exitOK
	}
	if err != nil {
		cmdline.Usage(errOut, name, err.Error())
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return chatMain(ctx, cfg, in, out, errOut)
}

// fail writes one line on errOut and returns code.
func fail(errOut io.Writer, code int, format string, args ...any) int {
	fmt.Fprintf(errOut, name+": "+format+"\n", args...)
	return code
}

// chatMain connects and chats until end of input, /quit or ctx ends.
func chatMain(ctx context.Context, cfg *config, in io.Reader, out, errOut io.Writer) int {
	opts := &xty.Options{URL: cfg.url, AdapterID: name, GameID: cfg.game, Version: "0.1.0", Logger: slog.New(&lineHandler{w: errOut})}
	var h *xtytest.Server
	if cfg.fake {
		h = xtytest.NewServer(&xtytest.Options{Agent: fakeAgent}) // in memory: no port to open
		defer h.Close()
		opts.URL, opts.HTTPClient = h.URL, h.Client()
	}
	if cfg.save != "" {
		opts.SaveID = xty.SaveID(cfg.game, cfg.save)
	}
	if cfg.record != "" {
		f, err := os.Create(cfg.record)
		if err != nil {
			return fail(errOut, exitUsage, "--record: %v; give a file in a folder you can write to; run '%s --help' for usage", err, name)
		}
		defer f.Close()
		opts.Recorder = f
	}
	c, err := xty.New(opts)
	if err != nil {
		var ce *xty.ConfigError
		if errors.As(err, &ce) && ce.Field == "URL" {
			return fail(errOut, exitUsage, "--url %s: %s; run '%s --help' for usage", cfg.url, ce.Reason, name)
		}
		return fail(errOut, exitUsage, "%v; run '%s --help' for usage", err, name)
	}
	if err := c.HandleAtom("demo.roll_dice", rollDice); err != nil {
		return fail(errOut, exitFailed, "%v", err) // a bug: the name is fixed
	}
	if err := c.Connect(ctx); err != nil {
		c.Close()
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return fail(errOut, exitFailed, "cannot reach the Harness at %s (%v); start XiaoTangYuan and its game plugin, pass --url if it listens elsewhere, or try --fake", cfg.url, err)
	}

	o := newOutput(out, c.Poll)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		o.run()
	}()
	code := chat(ctx, &session{c: c, h: h, game: cfg.game, o: o}, in)
	c.Close()
	o.close() // run prints the last events, then returns
	wg.Wait()
	return code
}
