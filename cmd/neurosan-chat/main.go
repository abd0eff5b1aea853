// Command neurosan-chat is a terminal chat with a NeuroSan agent network.
//
//	neurosan-chat --url http://localhost:8080 --agent math_guy --sly x=6 --sly y=7
//	neurosan-chat --fake --verbose
//
// Each line read from standard input is one turn; the answer (the last
// AGENT_FRAMEWORK message) is printed after "agent>". With --verbose the
// agents' intermediate messages are streamed too (the MAXIMAL filter), each
// with its origin path. --fake serves the built-in demo networks
// (neurosantest.DemoAgents) on a loopback port instead of a real server.
// Type /reset to start a new conversation and /quit (or end of input) to
// leave. Ctrl-C during a turn cancels it (the connection is closed, which
// stops the turn on the server); at the prompt it quits.
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
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

func main() {
	log.SetFlags(0)
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		log.Fatalf("neurosan-chat: %v", err)
	}
}

type config struct {
	url, agent, record string
	fake, verbose      bool
	fakeDelay, turn    time.Duration
	sly                slyFlags
}

// slyFlags collects repeated --sly key=value flags. A value that is valid
// JSON is sent as it is (6, true, {"a":1}); anything else as a string.
type slyFlags map[string]json.RawMessage

func (s slyFlags) String() string { return fmt.Sprint(map[string]json.RawMessage(s)) }

func (s slyFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	if json.Valid([]byte(v)) {
		s[k] = json.RawMessage(v)
		return nil
	}
	b, err := json.Marshal(v)
	s[k] = b
	return err
}

func parse(args []string, stderr io.Writer) (*config, error) {
	c := &config{sly: slyFlags{}}
	fs := flag.NewFlagSet("neurosan-chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://localhost:8080", "NeuroSan server base URL")
	fs.StringVar(&c.agent, "agent", "", "agent network name (may contain /); default: the first listed")
	fs.BoolVar(&c.fake, "fake", false, "serve the built-in demo networks on a loopback port instead of --url")
	fs.DurationVar(&c.fakeDelay, "fake-delay", neurosantest.RealLineDelay, "with --fake, the pause after each streamed line (like the real server)")
	fs.BoolVar(&c.verbose, "verbose", false, "show the agents' intermediate messages (MAXIMAL filter)")
	fs.StringVar(&c.record, "record", "", "write a JSON Lines protocol log to this file")
	fs.DurationVar(&c.turn, "turn-timeout", 15*time.Minute, "longest time one turn may take")
	fs.Var(c.sly, "sly", "sly_data key=value sent with every turn (repeatable)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	cfg, err := parse(args, os.Stderr)
	if err != nil {
		return err
	}
	if cfg.fake {
		delay := cfg.fakeDelay
		if delay == 0 {
			delay = -1 // the fake's "no delay"
		}
		srv := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents(), LineDelay: delay})
		defer srv.Close()
		cfg.url = srv.URL
	}
	opts := &neurosan.ClientOptions{TurnTimeout: cfg.turn}
	if cfg.record != "" {
		f, err := os.Create(cfg.record)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Recorder = f
	}
	client, err := neurosan.New(cfg.url, opts)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if cfg.agent, err = pickAgent(ctx, client, cfg.agent, stdout); err != nil {
		return err
	}
	return chat(ctx, client, cfg, stdin, stdout)
}

// pickAgent checks the agent exists and prints its description; with no
// agent given it lists the networks and takes the first.
func pickAgent(ctx context.Context, c *neurosan.Client, agent string, w io.Writer) (string, error) {
	if agent == "" {
		agents, err := c.List(ctx)
		if err != nil {
			return "", err
		}
		if len(agents) == 0 {
			return "", errors.New("the server lists no agent networks; name one with --agent")
		}
		for _, a := range agents {
			fmt.Fprintf(w, "available: %s: %s\n", a.AgentName, a.Description)
		}
		agent = agents[0].AgentName
	}
	f, err := c.Function(ctx, agent)
	if errors.Is(err, neurosan.ErrNotFound) {
		return "", fmt.Errorf("no agent network %q on this server (run without --agent to list them): %w", agent, err)
	}
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "chatting with %s: %s\n", agent, f.Description)
	return agent, nil
}

func chat(ctx context.Context, c *neurosan.Client, cfg *config, stdin io.Reader, w io.Writer) error {
	opts := &neurosan.ConversationOptions{}
	if cfg.verbose {
		opts.Filter = neurosan.FilterMaximal
		opts.OnMessage = func(m *neurosan.ChatMessage) { printStep(w, m) }
	}
	conv := neurosan.NewConversation(c, cfg.agent, opts)
	for k, v := range cfg.sly {
		if err := conv.SetSlyData(k, v); err != nil {
			return err
		}
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(nil, 1<<20)
	for {
		fmt.Fprint(w, "you> ")
		if !in.Scan() {
			fmt.Fprintln(w)
			return in.Err()
		}
		text := strings.TrimSpace(in.Text())
		switch text {
		case "":
			continue
		case "/quit":
			return nil
		case "/reset":
			conv.Reset()
			fmt.Fprintln(w, "(new conversation)")
			continue
		}
		// Ctrl-C is caught only while a turn runs, and cancels that turn.
		turnCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
		ans, err := conv.Send(turnCtx, text)
		interrupted := turnCtx.Err() != nil && ctx.Err() == nil
		stop()
		if interrupted {
			fmt.Fprintln(w, "\n(turn cancelled)")
			continue
		}
		if err != nil {
			fmt.Fprintf(w, "error: %v\n", err)
			continue
		}
		fmt.Fprintf(w, "agent> %s\n", ans.Text)
		if cfg.verbose && len(ans.SlyData) > 0 {
			b, _ := json.Marshal(ans.SlyData)
			fmt.Fprintf(w, "  sly_data: %s\n", b)
		}
	}
}

// printStep prints an intermediate message with its origin path. The final
// AGENT_FRAMEWORK answer is printed by chat.
func printStep(w io.Writer, m *neurosan.ChatMessage) {
	if m.Type == neurosan.TypeAgentFramework {
		return
	}
	path := make([]string, len(m.Origin))
	for i, o := range m.Origin {
		path[i] = o.Tool
	}
	if p, ok := m.Progress(); ok {
		fmt.Fprintf(w, "  [%s] progress %.0f%%\n", strings.Join(path, "/"), p*100)
		return
	}
	fmt.Fprintf(w, "  [%s %s] %s\n", strings.Join(path, "/"), m.Type, m.Text)
}
