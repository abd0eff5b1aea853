// Command neuro-demo is a game of tic-tac-toe that Neuro plays through the
// neuro SDK: you are X, she is O. It registers one action with a schema,
// describes the board as context, forces her choice every turn, validates
// her move (a taken cell fails, so she retries) and shows every message on
// the wire as it goes.
//
// It connects to $NEURO_SDK_WS_URL, or with --fake (the default when that
// variable is unset) to an in-process fake Neuro from neuro/neurotest.
//
//	go run ./cmd/neuro-demo            # against the fake, you type cells 1-9
//	go run ./cmd/neuro-demo --auto     # your side plays itself
//	NEURO_SDK_WS_URL=ws://localhost:8000 go run ./cmd/neuro-demo
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
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

func parseFlags(args []string, out io.Writer) (config, error) {
	envURL := os.Getenv("NEURO_SDK_WS_URL")
	var c config
	fs := flag.NewFlagSet("neuro-demo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.BoolVar(&c.fake, "fake", envURL == "", "play against the in-process fake Neuro (default when NEURO_SDK_WS_URL is unset)")
	fs.BoolVar(&c.randy, "randy", false, "make the fake behave like the official Randy mock instead of strict Neuro")
	fs.StringVar(&c.url, "url", envURL, "Neuro server URL (default $NEURO_SDK_WS_URL, else "+neuro.DefaultURL+")")
	fs.BoolVar(&c.auto, "auto", false, "play your side automatically (first free cell) instead of reading stdin")
	fs.IntVar(&c.games, "games", 1, "number of games")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the fake's random choices")
	fs.DurationVar(&c.delay, "delay", 500*time.Millisecond, "the fake's delay before answering a force")
	fs.BoolVar(&c.quiet, "quiet", false, "do not show wire messages")
	fs.DurationVar(&c.deadline, "turn-timeout", 2*time.Minute, "give up on a turn of Neuro's after this long")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.games < 1 {
		return c, errors.New("--games must be at least 1")
	}
	return c, nil
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	cfg, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	opts := &neuro.ClientOptions{URL: cfg.url, Prefix: "tictactoe_", Poll: true,
		OnError: func(err error) { fmt.Fprintln(out, "!", err) }}
	if !cfg.quiet {
		opts.Recorder = &wireLog{w: out}
	}
	if cfg.fake {
		mode := neurotest.Strict
		if cfg.randy {
			mode = neurotest.Randy
		}
		srv := neurotest.NewServer(&neurotest.Options{Mode: mode, Seed: cfg.seed, Delay: cfg.delay})
		defer srv.Close()
		opts.Dial = srv.Dial
		fmt.Fprintf(out, "Playing against the fake Neuro (seed %d).\n", cfg.seed)
	} else {
		fmt.Fprintf(out, "Connecting to %s.\n", cfg.url)
	}
	c, err := neuro.NewClient("Tic-Tac-Toe", opts)
	if err != nil {
		return err
	}
	defer c.Close()
	g := &game{c: c, out: out, auto: cfg.auto, in: bufio.NewScanner(in), turnTimeout: cfg.deadline}
	if err := c.Register(g.placeAction()); err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	for i := 0; i < cfg.games; i++ {
		if err := g.play(ctx); err != nil {
			return err
		}
	}
	// Let the last context leave before closing.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Flush(fctx); err != nil {
		fmt.Fprintln(out, "!", err)
	}
	return nil
}
