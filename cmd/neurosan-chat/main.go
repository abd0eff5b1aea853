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
// Type /reset to start a new conversation and /quit (or end the input) to
// leave. Ctrl-C during a turn abandons it: the connection is closed, and
// the server stops the turn when it next writes to it (with MINIMAL and no
// heartbeat, at its answer). Ctrl-C at the prompt quits.
//
// Exit status: 0 done (/quit or end of input), 1 the server or the agent
// could not be used, 2 usage error (a bad flag, or a --record file that
// cannot be written), 130 interrupted.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/cmdline"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, interrupts))
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

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func newFlagSet(c *config) *flag.FlagSet {
	fs := cmdline.NewFlagSet("neurosan-chat") // usage goes to stdout on -h; a mistake is one line on stderr
	fs.StringVar(&c.url, "url", "http://localhost:8080", "NeuroSan server base `URL`")
	fs.StringVar(&c.agent, "agent", "", "agent network `NAME` (may contain /); default: the first the server lists")
	fs.BoolVar(&c.fake, "fake", false, "serve the built-in demo networks on a loopback port instead of --url")
	fs.DurationVar(&c.fakeDelay, "fake-delay", 0, "with --fake, the `DURATION` of a pause after each streamed line, as servers before May 2026 made (0.3s)")
	fs.BoolVar(&c.verbose, "verbose", false, "show the agents' intermediate messages (MAXIMAL filter)")
	fs.StringVar(&c.record, "record", "", "write a JSON Lines protocol log to `FILE` (it contains sly_data)")
	fs.DurationVar(&c.turn, "turn-timeout", 0, "give up on a turn after this `DURATION` (0: never, like the server; Ctrl-C abandons one)")
	fs.Var(c.sly, "sly", "sly_data `key=value` sent with every turn (repeatable; a value that is not JSON is a string)")
	return fs
}

const usageIntro = `neurosan-chat: chat with a NeuroSan agent network from the terminal.

Each line you type is one turn; the network's answer is printed after
"agent>". The conversation's chat_context and your sly_data are carried
from turn to turn. Type /reset for a new conversation, /quit or end the
input to leave. Ctrl-C abandons a turn; at the prompt it quits.

Usage:
  neurosan-chat [flags]

  neurosan-chat --fake --verbose                      the built-in demo networks
  neurosan-chat --agent math_guy --sly x=6 --sly y=7  a server on localhost:8080
  neurosan-chat --url https://agents.example.com --agent games/quest_designer

Flags:
`

const usageOutro = `
Exit status: 0 done (/quit or end of input), 1 the server or the agent
could not be used, 2 usage error (a bad flag, or a --record file that
cannot be written), 130 interrupted.
`

// parse parses args; errors are flag.ErrHelp after the usage, or a
// mistake (*usageError or cmdline's).
func parse(args []string, stdout io.Writer) (*config, error) {
	c := &config{sly: slyFlags{}}
	fs := newFlagSet(c)
	set, err := cmdline.Parse(fs, args, func() { cmdline.WriteUsage(stdout, fs, usageIntro, usageOutro) })
	if err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, usagef("unexpected argument %q (a turn is typed at the prompt, not given as an argument)", fs.Arg(0))
	case c.fake && set["url"]:
		return nil, usagef("--fake and --url: pick one (the fake needs no URL)")
	case set["fake-delay"] && !c.fake:
		return nil, usagef("--fake-delay is for the fake: add --fake, or drop --fake-delay")
	case c.fakeDelay < 0:
		return nil, usagef("--fake-delay %v: want 0 or more", c.fakeDelay)
	case c.turn < 0:
		return nil, usagef("--turn-timeout %v: want 0 (none) or a positive duration such as 10m", c.turn)
	case set["agent"] && c.agent == "":
		return nil, usagef("--agent is empty: give a network's name, or drop --agent to take the first listed")
	}
	if !c.fake {
		u, err := url.Parse(c.url)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, usagef("--url %q: want http:// or https:// and a host, such as http://localhost:8080", c.url)
		}
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, interrupts <-chan os.Signal) int {
	cfg, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		cmdline.Usage(stderr, "neurosan-chat", err.Error())
		return exitUsage
	}
	err = chat(ctx, cfg, stdin, stdout, stderr, interrupts)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errInterrupted), ctx.Err() != nil:
		fmt.Fprintln(stderr, "neurosan-chat: interrupted")
		return exitInterrupted
	case errors.As(err, new(*usageError)):
		fmt.Fprintf(stderr, "neurosan-chat: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "neurosan-chat: %v\n", err)
	return exitFailed
}

var errInterrupted = errors.New("interrupted")

// chat sets up the client and runs the conversation. Its errors say what
// went wrong and what to do.
func chat(ctx context.Context, cfg *config, stdin io.Reader, stdout, stderr io.Writer, interrupts <-chan os.Signal) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	opts := &neurosan.Options{
		HTTPClient:  &http.Client{Transport: tr},
		TurnTimeout: cfg.turn,
		Logger:      slog.New(&lineHandler{w: stderr}), // warnings: one line each, no timestamp
	}
	if cfg.fake {
		srv := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents(), LineDelay: cfg.fakeDelay})
		defer srv.Close()
		cfg.url, opts.HTTPClient = srv.URL, srv.Client() // in memory: no port to open
	}
	if cfg.record != "" {
		f, err := os.OpenFile(cfg.record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600) // it holds sly_data
		if err != nil {
			return usagef("--record: %v; give a path in a writable folder", err) // exit 2, as every command (Issue #32)
		}
		defer f.Close()
		opts.Recorder = f
	}
	client, err := neurosan.New(cfg.url, opts)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := client.Connect(ctx); err != nil {
		return serverError(err, cfg.url, "")
	}
	if cfg.agent, err = pickAgent(ctx, client, cfg, stdout); err != nil {
		return err
	}
	s := &session{cfg: cfg, client: client, out: stdout, errw: stderr, interrupts: interrupts}
	return s.loop(ctx, stdin)
}

// pickAgent checks the agent exists and prints its description; with no
// agent given it lists the networks and takes the first.
func pickAgent(ctx context.Context, c *neurosan.Client, cfg *config, w io.Writer) (string, error) {
	agent := cfg.agent
	if agent == "" {
		agents, err := c.List(ctx)
		if err != nil {
			return "", serverError(err, cfg.url, "")
		}
		if len(agents) == 0 {
			return "", errors.New("the server lists no agent networks: name one with --agent")
		}
		for _, a := range agents {
			// Server text is escaped and bounded (issue #16).
			fmt.Fprintf(w, "available: %s: %s\n", peertext.Clip(a.AgentName, peertext.LogBytes), peertext.Clip(a.Description, peertext.LineBytes))
		}
		agent = agents[0].AgentName
	}
	f, err := c.Function(ctx, agent)
	if err != nil {
		return "", serverError(err, cfg.url, agent)
	}
	fmt.Fprintf(w, "chatting with %s: %s\n", peertext.Clip(agent, peertext.LogBytes), peertext.Clip(f.Description, peertext.LineBytes))
	return agent, nil
}

// serverError explains an error of the first requests, which tell whether
// the server and the agent can be used at all.
func serverError(err error, url, agent string) error {
	var se *neurosan.StatusError
	switch {
	case errors.Is(err, neurosan.ErrNotFound):
		return fmt.Errorf("no agent network %q on %s: run without --agent to list them", agent, url)
	case errors.Is(err, neurosan.ErrForbidden):
		return fmt.Errorf("%s refuses agent %q (403): ask its operator for access, or pick another with --agent", url, agent)
	case errors.Is(err, neurosan.ErrInvalidAgent):
		return fmt.Errorf("%v: an agent name is like math_guy or games/quest_designer", err)
	case errors.As(err, &se):
		return fmt.Errorf("%v: %s", err, advice(err))
	}
	return fmt.Errorf("cannot reach NeuroSan at %s (%v): start the server there (it listens on port 8080 by default), give its address with --url, or try the built-in demo with --fake", url, err)
}

// advice says what to do after a failed turn.
func advice(err error) string {
	var se *neurosan.StreamError
	switch {
	case errors.Is(err, neurosan.ErrUnavailable):
		return "the server is busy or shutting down (a turn you abandoned may still hold its place): try again in a moment"
	case errors.As(err, &se) && se.Timeout():
		return "the network's request timeout ended the turn: try a simpler request"
	case errors.As(err, &se):
		return "the network failed on the server: its logs say why; try again or /reset"
	case errors.Is(err, neurosan.ErrConnectionCut):
		return "is the server still running? Try again"
	case errors.Is(err, neurosan.ErrTurnTimeout):
		return "the turn took longer than --turn-timeout: raise it, or set 0 for none"
	case errors.Is(err, neurosan.ErrNoAnswer):
		return "the network sent no answer: try rephrasing"
	case errors.Is(err, neurosan.ErrServer), errors.Is(err, neurosan.ErrBadRequest):
		return "the server's logs say why; try again"
	}
	return "check that the server is running, then try again"
}

// session is one conversation at the prompt.
type session struct {
	cfg        *config
	client     *neurosan.Client
	out, errw  io.Writer
	interrupts <-chan os.Signal
}

func (s *session) loop(ctx context.Context, stdin io.Reader) error {
	opts := &neurosan.ConversationOptions{}
	if s.cfg.verbose {
		opts.Filter = neurosan.FilterMaximal
	}
	conv := neurosan.NewConversation(s.client, s.cfg.agent, opts)
	for k, v := range s.cfg.sly {
		if err := conv.SetSlyData(k, v); err != nil {
			return err
		}
	}
	lines, readErr, done := readLines(stdin)
	defer close(done)
	for {
		fmt.Fprint(s.out, "you> ")
		var text string
		select {
		case l, ok := <-lines:
			if !ok { // end of input: a clean end
				fmt.Fprintln(s.out)
				if err := *readErr; err != nil {
					return fmt.Errorf("reading the input: %w (a turn may be up to 1 MiB long)", err)
				}
				return nil
			}
			text = strings.TrimSpace(l)
		case <-s.interrupts:
			fmt.Fprintln(s.out)
			return errInterrupted
		case <-ctx.Done():
			fmt.Fprintln(s.out)
			return errInterrupted
		}
		switch text {
		case "":
			continue
		case "/quit":
			return nil
		case "/reset":
			conv.Reset()
			fmt.Fprintln(s.out, "(new conversation)")
			continue
		}
		if err := s.turn(ctx, conv, text); err != nil {
			return err
		}
	}
}

// turn sends one turn. Ctrl-C abandons it and the chat goes on; an ended
// ctx ends the chat.
func (s *session) turn(ctx context.Context, conv *neurosan.Conversation, text string) error {
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	abandoned := make(chan struct{})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		select {
		case <-s.interrupts:
			close(abandoned)
			cancel()
		case <-turnCtx.Done():
		}
	}()
	ans, err := s.send(turnCtx, conv, text)
	cancel()
	<-watching
	select {
	case <-abandoned:
		fmt.Fprintln(s.out, "\n(turn abandoned; the server stops it at its next write)")
		return nil
	default:
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		fmt.Fprintf(s.errw, "neurosan-chat: %s: %s\n", peertext.Clip(err.Error(), peertext.LineBytes), advice(err))
		return nil
	}
	fmt.Fprintf(s.out, "agent> %s\n", peertext.Text(ans.Text))
	if s.cfg.verbose && len(ans.SlyData) > 0 {
		b, _ := json.Marshal(ans.SlyData)
		fmt.Fprintf(s.out, "  sly_data: %s\n", peertext.Text(string(b)))
	}
	return nil
}

// send sends one turn and prints its intermediate messages (with
// --verbose) as they arrive.
func (s *session) send(ctx context.Context, conv *neurosan.Conversation, text string) (*neurosan.ChatMessage, error) {
	st, err := conv.Stream(ctx, text)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for m := range st.Events() {
		if s.cfg.verbose {
			printStep(s.out, m)
		}
	}
	return st.Answer(ctx)
}

// readLines reads stdin on a goroutine of its own, so that the prompt can
// also wait for Ctrl-C. The channel closes at the end of the input, after
// which *err holds a read error, if any; done stops the goroutine once the
// chat no longer reads (a blocked read of a terminal ends with the
// process).
func readLines(r io.Reader) (<-chan string, *error, chan<- struct{}) {
	lines := make(chan string)
	done := make(chan struct{})
	var err error
	go func() {
		defer close(lines)
		in := bufio.NewScanner(r)
		in.Buffer(nil, 1<<20)
		for in.Scan() {
			select {
			case lines <- in.Text():
			case <-done:
				return
			}
		}
		err = in.Err()
	}()
	return lines, &err, done
}

// printStep prints an intermediate message with its origin path. The final
// AGENT_FRAMEWORK answer is printed by turn.
func printStep(w io.Writer, m *neurosan.ChatMessage) {
	if m.Type == neurosan.TypeAgentFramework {
		return
	}
	path := make([]string, len(m.Origin))
	for i, o := range m.Origin {
		path[i] = o.Tool
	}
	if p, ok := m.Progress(); ok {
		fmt.Fprintf(w, "  [%s] progress %.0f%%\n", peertext.Clip(strings.Join(path, "/"), peertext.LogBytes), p*100)
		return
	}
	fmt.Fprintf(w, "  [%s %s] %s\n", peertext.Clip(strings.Join(path, "/"), peertext.LogBytes), peertext.Clip(string(m.Type), peertext.LogBytes), peertext.Text(m.Text))
}
