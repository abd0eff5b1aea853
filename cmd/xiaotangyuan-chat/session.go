package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// chat reads lines until end of input or /quit (exit 0) or until ctx ends
// (exit 130).
func chat(ctx context.Context, s *session, in io.Reader) int {
	lines := make(chan string)
	go func() { // ends at end of input; not joined, as stdin cannot be interrupted
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return exitInterrupted
		case line, ok = <-lines:
		}
		if !ok || !s.line(ctx, strings.TrimSpace(line)) {
			if ctx.Err() != nil {
				return exitInterrupted
			}
			return exitOK
		}
	}
}

// session runs the commands and chat lines of one terminal chat.
type session struct {
	c    *xty.Client
	h    *xtytest.Server // nil without --fake
	game string          // the --game prefix of hashed save names
	o    *output
}

const commandList = "/retry, /ping, /save NAME, /proactive, /quit"

// line runs one input line and reports whether to go on.
func (s *session) line(ctx context.Context, line string) bool {
	var err error
	switch cmd, arg, _ := strings.Cut(line, " "); cmd {
	case "":
	case "/quit":
		return false
	case "/ping":
		if err = s.c.Ping(ctx); err == nil {
			s.o.say("pong\n")
		}
	case "/save":
		// Hashed like --save, so that a slot named either way is the same
		// save for the Harness.
		if arg = strings.TrimSpace(arg); arg == "" {
			s.o.say("usage: /save NAME (the save slot to switch to)\n")
			return true
		}
		err = s.c.SetSaveID(ctx, xty.SaveID(s.game, arg))
	case "/proactive":
		if s.h == nil {
			s.o.say("/proactive only works with the built-in fake Harness: restart with --fake to try it\n")
			return true
		}
		s.h.Proactive("Still there? It is getting dark.")
	case "/retry":
		var r xty.Reply
		if r, err = s.c.Retry(ctx, nil); err == nil {
			s.o.reply(r)
		}
	default:
		if strings.HasPrefix(cmd, "/") {
			s.o.say(fmt.Sprintf("unknown command %s; the commands are %s\n", cmd, commandList))
			return true
		}
		var r xty.Reply
		if r, err = s.c.Chat(ctx, line, &xty.ChatContext{PlayerName: "player"}); err == nil {
			s.o.reply(r)
		}
	}
	if err != nil && ctx.Err() == nil {
		s.o.say(fmt.Sprintf("error: %s (%s)\n", peertext.Clip(err.Error(), peertext.LineBytes), nextStep(err))) // may quote the Harness (issue #16)
	}
	return true
}

// nextStep says what the user can do about a failed command.
func nextStep(err error) string {
	var re *xty.RPCError
	switch {
	case errors.Is(err, xty.ErrDisconnected):
		return "the connection to the Harness is down; it comes back by itself, try again in a moment"
	case errors.Is(err, xty.ErrTimeout):
		return "the Harness did not answer in time; try again, or /ping to see whether it is busy"
	case errors.Is(err, xty.ErrMessageTooBig):
		return "the Harness takes at most 1 MiB in one message; send something shorter"
	case errors.As(err, &re):
		return "the Harness refused it; try again, or say it differently"
	}
	return "try again"
}

// rollDice is the example atom: {"sides": n} (default 6) -> {"roll": k}.
func rollDice(ctx context.Context, args json.RawMessage) (any, error) {
	var a struct {
		Sides int `json:"sides"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("bad arguments: %v", err)
	}
	if a.Sides == 0 {
		a.Sides = 6
	}
	if a.Sides < 2 || a.Sides > 1000 {
		return nil, fmt.Errorf("a die needs 2-1000 sides, not %d", a.Sides)
	}
	return map[string]int{"roll": 1 + rand.IntN(a.Sides)}, nil
}

// fakeAgent answers like the fake's Echo, except that it rolls the game's
// die when asked to, and is cut short by a barge-in (as if the player
// pressed push-to-talk) when asked to be interrupted.
func fakeAgent(ctx context.Context, t *xtytest.Turn) (string, error) {
	text := strings.ToLower(t.Text)
	switch {
	case strings.Contains(text, "interrupt"):
		t.Say("Let me tell you a long story. ")
		t.BargeIn()
		t.Say("Once upon a time...")
		return "Let me tell you a long story. Once upon a time...", nil
	case !strings.Contains(text, "roll"):
		return xtytest.Echo(ctx, t)
	}
	t.Say("Let me roll... ")
	res, err := t.CallAtom(ctx, "demo.roll_dice", map[string]int{"sides": 6})
	if err != nil {
		return "", err
	}
	var r struct{ Roll int }
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	t.Step()
	reply := fmt.Sprintf("You rolled a %d!", r.Roll)
	t.Say(reply)
	return reply, nil
}
