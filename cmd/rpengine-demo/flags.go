package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/cmdline"
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
	inspect       string // --inspect: the inspector page's loopback address
	verbose       bool
	say           string
	wavFile       string
	outFile       string
	mailbox       string // --mailbox: the file transport's folder
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

// Reply languages the engine's speech model has (output.language; another
// fails with unsupported_language once queued, docs/rpengine-protocol.md):
// the list rpengine/validate.go keeps.
var languages = strings.Fields("en ko es pt fr de it pl ru nl cs ar zh ja hu tr fi sk da hr el sv nb he uk id ms vi th ro bg")

// newFlagSet defines every flag, writing into c.
func newFlagSet(c *config) *flag.FlagSet {
	fs := cmdline.NewFlagSet("rpengine-demo") // -h prints usage (see parseFlags); a mistake prints one line
	fs.StringVar(&c.engine, "engine", "real", "`MODE`: real (RPEngine in a browser) or sim (a fake engine in-process: offline, replies are simulated)")
	fs.IntVar(&c.port, "port", rpengine.DefaultPort, "loopback `PORT` the RPEngine page connects to; 0 picks a free one and prints it, as --engine sim does by default")
	fs.StringVar(&c.mailbox, "mailbox", "", "use the file transport instead of a socket: serve the mailbox folder `DIR` (created if missing), "+
		"which the player selects in the RPEngine page; for games that cannot open a local socket")
	fs.BoolVar(&c.devOrigin, "dev-origin", false, "also accept "+rpengine.OriginDevelopment+" (a local build of the RPEngine page)")
	fs.DurationVar(&c.wait, "wait", 2*time.Minute, "how long to wait for the engine to connect, or to come back after a lost connection, as a `DURATION` such as 30s or 5m (interactive: no limit unless given)")
	fs.StringVar(&c.cardFile, "card", "", "character card `FILE`, JSON or PNG, as exported (V1, V2 or V3; repaired on load) (default: the built-in card, Wren)")
	fs.StringVar(&c.characterID, "character-id", "", "the game's `ID` for the character (default: from the card's name, e.g. wren)")
	fs.StringVar(&c.integrationID, "integration-id", "rpengine-demo", "the game's integration `ID`")
	fs.StringVar(&c.player, "player", "", "the player's display `NAME`, {{user}} in the card (default: the engine's \"Player\")")
	fs.StringVar(&c.sceneFile, "scene", "", "prompt scene: a promptScene JSON `FILE` (needs --directive)")
	fs.StringVar(&c.directiveFile, "directive", "", "prompt directive: a promptDirective JSON `FILE` (needs --scene)")
	fs.StringVar(&c.voice, "voice", "F4", "speaking `VOICE`, F1-F5 or M1-M5")
	fs.StringVar(&c.lang, "lang", "en", "reply language `CODE` (en, ko, es, fr, de, ja, zh, ...)")
	fs.BoolVar(&c.textOnly, "text-only", false, "ask for text replies only (no speech)")
	fs.BoolVar(&c.noPlayback, "no-playback", false, "do not play speech (it is still received: see --out)")
	fs.StringVar(&c.say, "say", "", "send `TEXT` as one event, print the reply's text, exit")
	fs.StringVar(&c.wavFile, "wav", "", "send the WAV file `FILE.wav` as the player's speech (WAV only: PCM 8-32 bit or float, any rate and channels; with --say, in the same event)")
	fs.StringVar(&c.outFile, "out", "", "write the reply's speech to `FILE.wav` (44.1 kHz mono PCM16, as received)")
	fs.StringVar(&c.recordFile, "record", "", "record every message in and out, with timestamps, to `FILE.jsonl` (for bug reports)")
	fs.StringVar(&c.inspect, "inspect", "", "serve the inspector page (each reply's timeline, text and speech, the protocol log) on the loopback `ADDR`, "+
		"such as 127.0.0.1:0 (a free port), and print its URL, token included")
	fs.BoolVar(&c.verbose, "v", false, "debug logs on stderr (also RPENGINE_DEMO_DEBUG=1)")
	fs.Var(&c.simFaults, "sim-faults", "") // for tests: no usage text, so usage does not list it
	return fs
}

// parseFlags parses args; errors are a mistake (*usageError or
// cmdline's), or flag.ErrHelp after the usage was written to stdout.
func parseFlags(args []string, stdout io.Writer) (*config, error) {
	c := &config{}
	fs := newFlagSet(c)
	set, err := cmdline.Parse(fs, args, func() { usage(fs, stdout) })
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (text to say goes in --say)", fs.Arg(0))
	}
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
	if c.mailbox != "" && (set["port"] || set["dev-origin"]) {
		return usagef("--port and --dev-origin are for the WebSocket transport; --mailbox uses a folder instead")
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

// flagGroups orders the flags in usage; a flag left out is listed under
// "Other" rather than lost.
var flagGroups = []struct {
	title string
	names []string
}{
	{"Engine and connection", []string{"engine", "port", "dev-origin", "mailbox", "wait"}},
	{"Character and scene", []string{"card", "character-id", "integration-id", "player", "scene", "directive"}},
	{"Replies", []string{"voice", "lang", "text-only", "no-playback"}},
	{"Scripted turn", []string{"say", "wav", "out"}},
	{"Debugging", []string{"record", "inspect", "v"}},
}

const usageIntro = `rpengine-demo: talk to a character from a terminal, through RPEngine.

RPEngine is a browser app that runs the character's model, speech-to-text
and text-to-speech on the player's machine. A game hosts a loopback server
(github.com/gamelink-go/gamelink/rpengine) that the RPEngine page connects
to; this demo is such a game.

Try it offline first (no browser, no sound card needed):
  rpengine-demo --engine sim                     talk to a simulated engine
  rpengine-demo --engine sim --say "Hello"       one scripted turn

Usage:
  rpengine-demo [flags]
        interactive: each line typed is one event
  rpengine-demo --say TEXT [--wav FILE] [flags]
        scripted: one turn, the reply's text on stdout

Interactive: Ctrl-C clears the line being typed, cancels the reply, and at
an empty prompt quits when pressed twice; Ctrl-D at an empty prompt quits
once queued lines are answered; /help lists the commands (/mic,
/browser-mic, /card FILE, /voice, /lang, /text-only, /quit).

Scripted: stdout holds only the reply's final text and a newline.
Exit codes: 0 reply completed, 1 engine error or cancelled, 2 usage error,
3 no engine within --wait, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
`

func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, usageIntro)
	listed := map[string]bool{}
	for _, g := range flagGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			cmdline.PrintFlag(w, fs.Lookup(name))
			listed[name] = true
		}
	}
	other := false
	fs.VisitAll(func(f *flag.Flag) {
		if listed[f.Name] || f.Usage == "" {
			return
		}
		if !other {
			fmt.Fprintf(w, "\nOther:\n")
			other = true
		}
		cmdline.PrintFlag(w, f)
	})
}
