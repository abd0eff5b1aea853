package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
)

// config is everything the command line sets.
type config struct {
	engine        string // "real" or "sim"
	port          int
	devOrigin     bool
	cardFile      string
	integrationID string
	characterID   string
	player        string
	voice         string
	lang          string
	textOnly      bool
	noPlayback    bool
	sceneFile     string
	directiveFile string
	recordFile    string
	verbose       bool
	say           string
	wavFile       string
	outFile       string
	wait          time.Duration
	waitSet       bool      // --wait was given (interactive mode then bounds its waits too)
	simFaults     simFaults // hidden: --sim-faults, for tests
}

// scripted reports whether the run is one scripted turn.
func (c *config) scripted() bool { return c.say != "" || c.wavFile != "" }

// usageError is a command-line mistake: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

var voices = []string{"F1", "F2", "F3", "F4", "F5", "M1", "M2", "M3", "M4", "M5"}

// Reply languages the engine accepts (spec section 5, output.language).
var languages = strings.Fields("en ko es pt fr de it pl ru nl cs ar zh ja hu tr fi sk da hr el sv nb he uk id ms vi th ro bg")

// hiddenFlags are for tests; usage does not list them.
var hiddenFlags = []string{"sim-faults"}

// parseFlags parses args; errors are *usageError, or flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("rpengine-demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.engine, "engine", "real", "`real` (RPEngine in a browser) or sim (offline fake engine, simulated replies)")
	fs.IntVar(&c.port, "port", rpengine.DefaultPort, "loopback `port` to listen on; 0 picks a free one and prints it (with --engine sim the default is 0)")
	fs.BoolVar(&c.devOrigin, "dev-origin", false, "also accept "+rpengine.OriginDevelopment+" (a local build of the RPEngine page)")
	fs.StringVar(&c.cardFile, "card", "", "character card `FILE` (JSON or PNG); default: the built-in card (Wren)")
	fs.StringVar(&c.integrationID, "integration-id", "rpengine-demo", "integration `id` (the game's id)")
	fs.StringVar(&c.characterID, "character-id", "", "character `id` (default: derived from the card's name)")
	fs.StringVar(&c.player, "player", "", "player display `name` ({{user}}; default: the engine's \"Player\")")
	fs.StringVar(&c.voice, "voice", "F4", "speech `voice`, F1-F5 or M1-M5")
	fs.StringVar(&c.lang, "lang", "en", "reply language `code` (en, ko, es, fr, de, ja, zh, ...)")
	fs.BoolVar(&c.textOnly, "text-only", false, "ask for text replies only (no speech)")
	fs.BoolVar(&c.noPlayback, "no-playback", false, "do not play speech (it is still received; see --out)")
	fs.StringVar(&c.sceneFile, "scene", "", "promptScene JSON `FILE` (needs --directive)")
	fs.StringVar(&c.directiveFile, "directive", "", "promptDirective JSON `FILE` (needs --scene)")
	fs.StringVar(&c.recordFile, "record", "", "record every envelope in and out, with timestamps, to `FILE.jsonl`")
	fs.BoolVar(&c.verbose, "v", false, "debug logs on stderr")
	fs.StringVar(&c.say, "say", "", "scripted: send `TEXT` as one event, print the reply, exit")
	fs.StringVar(&c.wavFile, "wav", "", "scripted: send `FILE.wav` as the player's speech (any rate/channels)")
	fs.StringVar(&c.outFile, "out", "", "write the reply's speech to `FILE.wav` (44.1 kHz mono PCM16)")
	fs.DurationVar(&c.wait, "wait", 2*time.Minute, "how long to wait for the engine to connect or come back (interactive: no limit unless set)")
	fs.Var(&c.simFaults, "sim-faults", "")
	fs.Usage = func() {} // -h prints usage below; a mistake prints one line
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, stderr)
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (text to say goes in --say)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.waitSet = set["wait"]
	return c, c.check(set)
}

// check validates the flags and applies mode-dependent defaults.
func (c *config) check(set map[string]bool) error {
	switch c.engine {
	case "real":
		if set["sim-faults"] {
			return usagef("--sim-faults needs --engine sim")
		}
	case "sim":
		if !set["port"] {
			c.port = 0
		}
	default:
		return usagef("--engine %q: want real or sim", c.engine)
	}
	if c.port < 0 || c.port > 65535 || (c.port > 0 && c.port < 1024) {
		return usagef("--port %d: want 0 (a free port) or 1024-65535", c.port)
	}
	c.voice = strings.ToUpper(c.voice)
	if !slices.Contains(voices, c.voice) {
		return usagef("--voice %q: want one of %s", c.voice, strings.Join(voices, " "))
	}
	if !slices.Contains(languages, c.lang) {
		return usagef("--lang %q: want one of %s", c.lang, strings.Join(languages, " "))
	}
	if (c.sceneFile == "") != (c.directiveFile == "") {
		return usagef("--scene and --directive go together (the protocol sends both or neither)")
	}
	if set["say"] && strings.TrimSpace(c.say) == "" {
		return usagef("--say: the text is blank")
	}
	if c.wait <= 0 {
		return usagef("--wait %v: want a positive duration", c.wait)
	}
	if c.integrationID == "" {
		return usagef("--integration-id is empty")
	}
	if c.textOnly && c.outFile != "" {
		return usagef("--out needs speech, but --text-only asks for text only")
	}
	return nil
}

func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `rpengine-demo: talk to a character through RPEngine, from a terminal.

Usage:
  rpengine-demo [flags]                      interactive: each line is one event
  rpengine-demo --say TEXT [--wav FILE]      scripted: one turn, reply text on stdout
  rpengine-demo --engine sim ...             offline, with a simulated engine

Scripted exit codes: 0 reply completed, 1 engine error or cancelled,
2 usage error, 3 no engine within --wait, 130 interrupted.

Flags:
`)
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(hiddenFlags, f.Name) {
			return
		}
		name, u := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if len(f.Name) == 1 {
			line = "  -" + f.Name
		}
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, u)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
