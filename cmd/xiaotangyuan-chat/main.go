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
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("xiaotangyuan-chat", flag.ContinueOnError)
	url := fs.String("url", xty.DefaultURL, "Harness WebSocket URL (loopback only)")
	fake := fs.Bool("fake", false, "run against a built-in fake Harness")
	game := fs.String("game", "terminal", "gameId sent in adapter.hello")
	save := fs.String("save", "", "save slot name; sent hashed as saveId")
	record := fs.String("record", "", "write a JSONL protocol log to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var h *xtytest.Harness
	if *fake {
		h = xtytest.New(&xtytest.Options{Agent: fakeAgent})
		defer h.Close()
		u, err := h.Listen("127.0.0.1:0")
		if err != nil {
			return err
		}
		*url = u
	}
	opts := &xty.Options{URL: *url, AdapterID: "xiaotangyuan-chat", GameID: *game, Version: "0.1.0"}
	if *save != "" {
		opts.SaveID = xty.SaveID(*game, *save)
	}
	if *record != "" {
		f, err := os.Create(*record)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Recorder = f
	}
	c, err := xty.New(opts)
	if err != nil {
		return err
	}
	c.HandleAtom("demo.roll_dice", rollDice)
	if err := c.Connect(ctx); err != nil {
		return err
	}

	p := newPrinter(out)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range c.Events() {
			p.event(ev)
		}
	}()
	err = chat(ctx, c, h, *game, in, p)
	c.Close() // closes Events
	wg.Wait()
	return err
}

// chat reads lines until end of input, /quit or ctx ends.
func chat(ctx context.Context, c *xty.Client, h *xtytest.Harness, game string, in io.Reader, p *printer) error {
	lines := make(chan string)
	go func() { // ends at end of input; not joined, as stdin cannot be interrupted
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	sess := &session{c: c, h: h, game: game, p: p}
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case line, ok = <-lines:
		}
		if !ok || !sess.line(ctx, strings.TrimSpace(line)) {
			return nil
		}
	}
}

// session runs the commands and chat lines of one terminal chat.
type session struct {
	c    *xty.Client
	h    *xtytest.Harness // nil without --fake
	game string           // the --game prefix of hashed save names
	p    *printer
}

// line runs one input line and reports whether to go on.
func (s *session) line(ctx context.Context, line string) bool {
	var err error
	switch cmd, arg, _ := strings.Cut(line, " "); cmd {
	case "":
	case "/quit":
		return false
	case "/ping":
		if err = s.c.Ping(ctx); err == nil {
			s.p.printf("pong\n")
		}
	case "/save":
		// Hashed like --save, so that a slot named either way is the same
		// save for the Harness.
		if arg = strings.TrimSpace(arg); arg == "" {
			err = errors.New("usage: /save NAME")
		} else {
			err = s.c.SetSaveID(ctx, xty.SaveID(s.game, arg))
		}
	case "/proactive":
		if s.h == nil {
			err = errors.New("/proactive needs --fake")
		} else {
			s.h.Proactive("Still there? It is getting dark.")
		}
	case "/retry":
		var r xty.Reply
		if r, err = s.c.Retry(ctx, nil); err == nil {
			s.p.reply(r)
		}
	default:
		var r xty.Reply
		if r, err = s.c.Chat(ctx, line, &xty.ChatContext{PlayerName: "player"}); err == nil {
			s.p.reply(r)
		}
	}
	if err != nil {
		s.p.printf("error: %v\n", err)
	}
	return true
}

// printer writes stream events and replies without interleaving lines.
type printer struct {
	mu      sync.Mutex // guards following
	w       io.Writer
	shown   string          // text of the open streaming line
	done    map[string]bool // interactions whose Done was printed
	changed chan struct{}   // closed and replaced when done changes
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, done: map[string]bool{}, changed: make(chan struct{})}
}

// waitDone waits (at most a second) until the stream of id has been
// printed: stream events precede the RPC result on the wire, but they
// reach the printer on another goroutine.
func (p *printer) waitDone(id string) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		p.mu.Lock()
		ok, ch := p.done[id], p.changed
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func (p *printer) event(ev xty.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case xty.EventText:
		// Text replaces what is shown: print the new tail, or start a new
		// line when the model began a new step.
		if ev.StepReset || !strings.HasPrefix(ev.Text, p.shown) {
			fmt.Fprint(p.w, "\n… ")
			p.shown = ""
		}
		fmt.Fprint(p.w, strings.TrimPrefix(ev.Text, p.shown))
		p.shown = ev.Text
	case xty.EventDone:
		if p.shown != "" {
			fmt.Fprintln(p.w)
		}
		p.shown = ""
		if len(p.done) > 1000 {
			clear(p.done)
		}
		p.done[ev.InteractionID] = true
		close(p.changed)
		p.changed = make(chan struct{})
		if ev.Source == xty.SourceProactive {
			fmt.Fprintf(p.w, "companion (unprompted): %s\n", ev.Text)
		}
	case xty.EventCancel:
		fmt.Fprintln(p.w, "[interrupted]")
	case xty.EventError:
		if ev.Err != nil {
			fmt.Fprintf(p.w, "[error: %v]\n", ev.Err)
		} else {
			fmt.Fprintf(p.w, "[harness error: %s]\n", ev.Message)
		}
	case xty.EventDisconnected:
		if errors.Is(ev.Err, net.ErrClosed) {
			return // our own Close
		}
		fmt.Fprintf(p.w, "[disconnected: %v]\n", ev.Err)
	case xty.EventConnected:
		fmt.Fprintln(p.w, "[connected]")
	}
}

func (p *printer) reply(r xty.Reply) {
	p.waitDone(r.InteractionID)
	p.printf("reply: %s\n", r.Text)
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
// die when asked to.
func fakeAgent(ctx context.Context, t *xtytest.Turn) (string, error) {
	if !strings.Contains(strings.ToLower(t.Text), "roll") {
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
