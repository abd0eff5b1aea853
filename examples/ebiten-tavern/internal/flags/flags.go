// Package flags reads the tavern's command line before Ebitengine starts.
//
// Ebitengine sets its window system up in a package init, and panics
// there when there is no display, so a main function comes too late to
// answer --help or a mistake without a display (Issue #32). This package
// is imported by main and imports only packages Ebitengine needs too,
// and its path sorts before Ebitengine's: Go initialises it first (the
// spec's package initialisation order), and its init answers --help, a
// mistake in the command line and a missing display, then exits, before
// Ebitengine's init runs. It must not import the library (rpengine needs
// net/http, which Ebitengine does not; net it needs, for X11).
package flags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"time"
)

// Config is the command line.
type Config struct {
	Engine     string // "real" or "sim"
	Port       int
	Mailbox    string
	CardFile   string
	Voice      string
	Lang       string
	TextOnly   bool
	Mute       bool
	Say        string
	Screenshot string
	ExitAfter  bool
	Wait       time.Duration
	Verbose    bool
	Inspect    string // the inspector page's loopback address, or ""
}

// Command is the command line, read by init; nil in a test binary, whose
// arguments are the test's.
var Command *Config

// DefaultPort is rpengine.DefaultPort (not imported: see the package doc).
const DefaultPort = 38471

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

func init() {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.") { // go test's flags
			return
		}
	}
	c, err := Parse(os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(ExitOK)
	case err != nil:
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v; run 'ebiten-tavern --help' for usage\n", err)
		os.Exit(ExitUsage)
	case noDisplay():
		fmt.Fprintln(os.Stderr, "ebiten-tavern: no display (DISPLAY and WAYLAND_DISPLAY are not set): "+
			"run it in a desktop session, or under xvfb-run -a")
		os.Exit(ExitFailed)
	}
	Command = c
}

// noDisplay reports whether the X11 or Wayland display Ebitengine needs
// on Linux and the BSDs is missing.
func noDisplay() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "netbsd", "openbsd", "dragonfly":
		return os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == ""
	}
	return false
}

// Parse reads args. --help (or -h) writes the usage to stdout and returns
// flag.ErrHelp; any other mistake is an error naming it, for one line on
// stderr, as the repository's commands do.
func Parse(args []string, stdout io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("ebiten-tavern", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Engine, "engine", "real", "`MODE`: real (RPEngine in a browser) or sim (a simulated engine, offline)")
	fs.IntVar(&c.Port, "port", DefaultPort, "loopback `PORT` the RPEngine page connects to (0: a free one; sim uses 0)")
	fs.StringVar(&c.Mailbox, "mailbox", "", "serve the mailbox folder `DIR` instead of a socket (the player selects it in the RPEngine page)")
	fs.StringVar(&c.CardFile, "card", "", "character card `FILE`, JSON or PNG, as exported (V1, V2 or V3, repaired on load; a PNG's image is the portrait; default: Maren)")
	fs.StringVar(&c.Voice, "voice", "F2", "speaking `VOICE`, F1-F5 or M1-M5")
	fs.StringVar(&c.Lang, "lang", "en", "reply language `CODE`")
	fs.BoolVar(&c.TextOnly, "text-only", false, "ask for text replies only (no speech)")
	fs.BoolVar(&c.Mute, "mute", false, "play no sound (as without a sound device); her mouth still moves")
	fs.StringVar(&c.Say, "say", "", "say `TEXT` once the engine is connected")
	fs.StringVar(&c.Screenshot, "screenshot", "", "write the scene to `FILE.png` once the reply has been heard")
	fs.BoolVar(&c.ExitAfter, "exit-after-reply", false, "exit once the reply has been heard (and the screenshot written)")
	fs.DurationVar(&c.Wait, "wait", 2*time.Minute, "with --exit-after-reply, how long to wait for the engine and its reply")
	fs.StringVar(&c.Inspect, "inspect", "", "serve the inspector page (each reply's timeline, text and speech, the protocol log) "+
		"on the loopback `ADDR`, such as 127.0.0.1:0 (a free port), and print its URL, token included")
	fs.BoolVar(&c.Verbose, "v", false, "debug logs on stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return nil, err
		}
		return nil, typed(err, args)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q (text to say goes in --say)", fs.Arg(0))
	case c.Engine != "real" && c.Engine != "sim":
		return nil, fmt.Errorf("--engine %q: want real or sim", c.Engine)
	case c.Mailbox != "" && set["port"]:
		return nil, errors.New("--port is for the socket; --mailbox uses a folder instead")
	case c.ExitAfter && strings.TrimSpace(c.Say) == "":
		return nil, errors.New("--exit-after-reply needs --say")
	case !validVoice(c.Voice):
		return nil, fmt.Errorf("--voice %q: want F1-F5 or M1-M5", c.Voice)
	case c.Wait <= 0:
		return nil, fmt.Errorf("--wait %v: want a positive duration", c.Wait)
	case c.Inspect != "" && !loopback(c.Inspect):
		return nil, fmt.Errorf("--inspect %q: want a loopback address, 127.0.0.1:PORT, localhost:PORT or [::1]:PORT "+
			"(port 0 picks a free one): the page shows the player's words and voice", c.Inspect)
	}
	if c.Engine == "sim" && !set["port"] {
		c.Port = 0
	}
	return c, nil
}

// typed words an unknown flag as the commands of the repository do,
// named as it was typed ("--x"; the flag package writes "-x").
func typed(err error, args []string) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return fmt.Errorf("unknown flag --%s", name)
		}
	}
	return fmt.Errorf("unknown flag -%s", name)
}

// loopback reports whether addr is a loopback HOST:PORT, as the
// inspector's Serve takes it (it checks too; here a mistake is answered
// before Ebitengine starts).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (host == "localhost" || ip != nil && ip.IsLoopback())
}

// validVoice reports whether v is one of the engine's voices, F1-F5 and
// M1-M5.
func validVoice(v string) bool {
	return len(v) == 2 && (v[0] == 'F' || v[0] == 'M') && v[1] >= '1' && v[1] <= '5'
}

// usage writes the help: every flag as --name (one dash for a one-letter
// flag), as the repository's commands show them, and the exit codes.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "ebiten-tavern: a small Ebitengine game whose character talks through RPEngine.")
	fmt.Fprintln(w, "\nUsage:\n  go run . [flags]")
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if arg != "" {
			name += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" {
			text += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  %s\n        %s\n", name, text)
	})
	fmt.Fprintln(w, "\nExit codes: 0 the reply completed, 1 an engine error or the game failed\n"+
		"(no display, say), 2 usage error (a bad flag, or a --card that cannot be\nread), 3 no engine connected within --wait.")
}
