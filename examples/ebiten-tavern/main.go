// Command ebiten-tavern is a small Ebitengine game whose character talks:
// Maren keeps the Drowned Lantern, and answers through RPEngine (the
// browser app that runs the model, speech-to-text and text-to-speech on
// the player's machine), by way of the gamelink library.
//
//	go run .                    # real RPEngine: open the address the scene shows
//	go run . --engine sim       # fully offline, a simulated engine
//	go run . --mailbox DIR      # the file mailbox instead of a socket
//
// Type a line and press Enter, or hold Tab and speak (push to talk);
// Esc interrupts her. The reply's subtitles stream in as the text arrives,
// her speech plays through Ebitengine's audio, and her mouth follows it.
//
// For automated runs, one turn, a screenshot once the reply has been
// heard, and exit:
//
//	go run . --engine sim --say "Hello there" --screenshot out.png --exit-after-reply
//
// It then prints one line on stdout:
//
//	speech reply=ID received=N rate=44100 delivered=M done=true interrupted=false underruns=0 pulled=P
//
// received counts the reply's speech samples as they came from the engine;
// delivered is how much of that reply the audio source gave Ebitengine,
// counted in samples at the reply's rate; pulled is how many frames
// Ebitengine read from it at 48 kHz, silence included.
//
// Ebitengine plays the speech, so it needs a sound device; --mute runs
// without one (the game then reads the mixer itself, so her mouth still
// moves). The tests need a display, as Ebitengine does: run them with
// xvfb-run -a go test ./... where there is none.
//
// Exit codes: 0 the reply completed, 1 the engine answered with an error
// or the game failed, 2 usage error, 3 no engine connected within --wait.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNoEngine = 3
)

type config struct {
	engine     string
	port       int
	mailbox    string
	cardFile   string
	voice      string
	lang       string
	textOnly   bool
	mute       bool
	say        string
	screenshot string
	exitAfter  bool
	wait       time.Duration
	verbose    bool
}

// parseFlags reads the command line. --help (or -h) writes the usage to
// stdout and returns flag.ErrHelp; any other mistake is an error naming it,
// for one line on stderr, as the repository's commands do.
func parseFlags(args []string, stdout io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("ebiten-tavern", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.engine, "engine", "real", "`MODE`: real (RPEngine in a browser) or sim (a simulated engine, offline)")
	fs.IntVar(&c.port, "port", defaultPort, "loopback `PORT` the RPEngine page connects to (0: a free one; sim uses 0)")
	fs.StringVar(&c.mailbox, "mailbox", "", "serve the mailbox folder `DIR` instead of a socket (the player selects it in the RPEngine page)")
	fs.StringVar(&c.cardFile, "card", "", "character card `FILE`, JSON or PNG, as exported (V1, V2 or V3, repaired on load; a PNG's image is the portrait; default: Maren)")
	fs.StringVar(&c.voice, "voice", "F2", "speaking `VOICE`, F1-F5 or M1-M5")
	fs.StringVar(&c.lang, "lang", "en", "reply language `CODE`")
	fs.BoolVar(&c.textOnly, "text-only", false, "ask for text replies only (no speech)")
	fs.BoolVar(&c.mute, "mute", false, "play no sound (for a machine without a sound device); her mouth still moves")
	fs.StringVar(&c.say, "say", "", "say `TEXT` once the engine is connected")
	fs.StringVar(&c.screenshot, "screenshot", "", "write the scene to `FILE.png` once the reply has been heard")
	fs.BoolVar(&c.exitAfter, "exit-after-reply", false, "exit once the reply has been heard (and the screenshot written)")
	fs.DurationVar(&c.wait, "wait", 2*time.Minute, "with --exit-after-reply, how long to wait for the engine and its reply")
	fs.BoolVar(&c.verbose, "v", false, "debug logs on stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: go run . [flags]   (a small Ebitengine game whose character talks through RPEngine)")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q (text to say goes in --say)", fs.Arg(0))
	case c.engine != "real" && c.engine != "sim":
		return nil, fmt.Errorf("--engine %q: want real or sim", c.engine)
	case c.mailbox != "" && set["port"]:
		return nil, errors.New("--port is for the socket; --mailbox uses a folder instead")
	case c.exitAfter && strings.TrimSpace(c.say) == "":
		return nil, errors.New("--exit-after-reply needs --say")
	case !validVoice(c.voice):
		return nil, fmt.Errorf("--voice %q: want F1-F5 or M1-M5", c.voice)
	case c.wait <= 0:
		return nil, fmt.Errorf("--wait %v: want a positive duration", c.wait)
	}
	if c.engine == "sim" && !set["port"] {
		c.port = 0
	}
	return c, nil
}

// validVoice reports whether v is one of the engine's voices, F1-F5 and
// M1-M5.
func validVoice(v string) bool {
	return len(v) == 2 && (v[0] == 'F' || v[0] == 'M') && v[1] >= '1' && v[1] <= '5'
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cfg, err := parseFlags(args, os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v; run 'go run . --help' for usage\n", err)
		return exitUsage
	}
	logLevel.Set(slog.LevelWarn)
	if cfg.verbose {
		logLevel.Set(slog.LevelDebug)
	}
	ch, err := loadCharacter(cfg.cardFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
		return exitUsage
	}
	for _, r := range ch.repairs {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: card repaired on load: %s\n", r)
	}
	k, err := openLink(cfg.port, cfg.mailbox)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
		return exitUsage
	}
	defer k.close()
	if cfg.engine == "sim" {
		eng, err := dialSim(k, cfg.mailbox)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
			return exitNoEngine
		}
		defer eng.Close()
	}
	v, err := openVoice(cfg.mute)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: audio: %v\n", err)
		return exitFailed
	}
	defer v.close()

	g := newGame(cfg, ch, k, v)
	ebiten.SetWindowSize(screenW, screenH)
	ebiten.SetWindowTitle("The Drowned Lantern")
	ebiten.SetWindowResizingMode(ebiten.WindowResizingModeEnabled)
	if err := ebiten.RunGame(g); err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
		if strings.Contains(err.Error(), "oto:") { // Ebitengine's audio driver
			fmt.Fprintf(os.Stderr, "ebiten-tavern: no sound device? --mute plays without one\n")
		}
		return exitFailed
	}
	return g.exitCode
}

// logLevel is the library's log level: warnings, or debug with -v. The
// scene shows the engine's state; the log is for bug reports.
var logLevel = new(slog.LevelVar)

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
}
