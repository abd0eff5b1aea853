// Command ebiten-tavern is a small Ebitengine game whose character talks:
// Maren keeps the Drowned Lantern, and answers through RPEngine (the
// browser app that runs the model, speech-to-text and text-to-speech on
// the player's machine), by way of the gamelink library.
//
//	go run .                    # real RPEngine: open the address the scene shows
//	go run . --engine sim       # fully offline, a simulated engine
//	go run . --mailbox DIR      # the file mailbox instead of a socket
//	go run . --inspect 127.0.0.1:0  # also serve the inspector page, and print its URL
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
// Ebitengine plays the speech. Without a sound device the game plays
// silently and says so in one line (it then reads the mixer itself, so
// her mouth still moves); --mute does the same on purpose. It needs a
// display, as Ebitengine does: without one it says so and exits 1, and
// --help works all the same. The tests need one too: run them with
// xvfb-run -a go test ./... where there is none.
//
// Exit codes: 0 the reply completed, 1 the engine answered with an error
// or the game failed, 2 usage error, 3 no engine connected within --wait.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/gamelink-go/gamelink/examples/ebiten-tavern/internal/flags"
)

// Exit codes.
const (
	exitOK       = flags.ExitOK
	exitFailed   = flags.ExitFailed
	exitUsage    = flags.ExitUsage
	exitNoEngine = 3
)

// config is the command line, read before Ebitengine starts (see package
// flags).
type config = flags.Config

func main() { os.Exit(run(flags.Command)) }

func run(cfg *config) int {
	logLevel.Set(slog.LevelWarn)
	if cfg.Verbose {
		logLevel.Set(slog.LevelDebug)
	}
	ch, err := loadCharacter(cfg.CardFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
		return exitUsage
	}
	for _, r := range ch.repairs {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: card repaired on load: %s\n", r)
	}
	k, err := openLink(cfg.Port, cfg.Mailbox, cfg.Inspect)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
		return exitUsage
	}
	defer k.close()
	if k.pageURL != "" {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: inspector page: %s\n", k.pageURL)
	}
	if cfg.Engine == "sim" {
		eng, err := dialSim(k, cfg.Mailbox, ch)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ebiten-tavern: %v\n", err)
			return exitNoEngine
		}
		defer eng.Close()
	}
	mute := cfg.Mute
	if !mute {
		if err := noSoundDevice(); err != nil { // a game without one still runs (Issue #32)
			fmt.Fprintf(os.Stderr, "ebiten-tavern: no sound device, so no sound; her mouth still moves (%v)\n", err)
			mute = true
		}
	}
	v, err := openVoice(mute)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: audio: %v\n", err)
		return exitFailed
	}
	defer v.close()
	k.hear(v.speaker)

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
