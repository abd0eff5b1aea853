package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// Exit codes of the scripted contract.
const (
	exitOK          = 0
	exitEngineError = 1   // request.error, or cancelled for a reason other than ours
	exitUsage       = 2   // bad flags or inputs (card, WAV, scene), port in use
	exitNoEngine    = 3   // no engine connected, or none came back, within --wait
	exitInterrupted = 130 // SIGINT
	exitTerminated  = 143 // SIGTERM (128 + 15, as shells report it)
)

// app is one run of the demo. Its fields are used by the main goroutine
// only, except where noted.
type app struct {
	cfg    *config
	con    *console
	log    *slog.Logger
	stdin  io.Reader
	stdout io.Writer // the line editor needs to know whether it is a terminal

	srv       *rpengine.Server
	sim       *sim
	serving   context.Context         // ends when the server stops; its cause is a *serverFailed on error
	fail      context.CancelCauseFunc // ends serving
	tap       *tap
	inspector *inspect.Inspector // --inspect, or nil
	pageURL   string             // the inspector's, token included
	card      *loadedCard
	charID    string
	prompt    *rpengine.Prompt // --scene and --directive
	speech    *speech          // --wav
	out       *wavOut          // --out
	outFailed bool             // an --out error was shown (wavOut's error is sticky)
	port      int

	events       int                    // eventIds issued
	shownSession string                 // the session whose capacity was shown
	cardName     atomic.Pointer[string] // a.card's name, for cardSent

	// Mutable by slash commands.
	voice, lang string
	textOnly    bool

	output    *audio.Device // nil: no playback
	player    *audio.Speaker
	noDevice  bool // said once that there is no sound device
	recorder  *audio.Recorder
	noMic     bool
	closing   atomic.Bool // the demo is shutting down: sessions end by its doing
	sigs      chan os.Signal
	lines     chan string // interactive input, closed at EOF
	pending   []string    // lines taken back from lines
	readerEnd chan struct{}
	closers   []func() // run at exit, last first
}

// run is the whole program: it parses args, runs the demo and returns the
// exit code. stdin, stdout and stderr are the terminal or pipes; getenv
// reads the environment.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpengine-demo: %v; run 'rpengine-demo --help' for usage\n", err)
		return exitUsage
	}
	a := &app{cfg: cfg, con: newConsole(stdout, stderr), stdin: stdin, stdout: stdout,
		voice: cfg.voice, lang: cfg.lang, textOnly: cfg.textOnly}
	level := slog.LevelWarn
	if cfg.verbose || getenv("RPENGINE_DEMO_DEBUG") != "" {
		level = slog.LevelDebug
	}
	hopts := &slog.HandlerOptions{Level: level}
	if level != slog.LevelDebug {
		// Warnings are for the player, who needs no timestamp (Issue #18);
		// debug logs keep theirs.
		hopts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
	}
	a.log = slog.New(slog.NewTextHandler(logWriter{a.con}, hopts))
	a.sigs = make(chan os.Signal, 2)
	signal.Notify(a.sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(a.sigs)

	defer a.close()
	if code := a.setup(); code != exitOK {
		return code
	}
	if cfg.scripted() {
		return a.scripted()
	}
	return a.interactive()
}

// setup prepares inputs, the server, the simulated engine and playback,
// and returns exitOK or the exit code of what failed (already explained on
// stderr). a.close must be called either way.
func (a *app) setup() int {
	for _, step := range []func() error{a.loadInputs, a.startInspector, a.openFiles, a.startServer, a.startSim} {
		if err := step(); err != nil {
			var f *serverFailed
			if !errors.As(err, &f) { // already shown
				a.con.Printf("rpengine-demo: %v%s", err, nextStep(err))
			}
			var ce *codeError
			if errors.As(err, &ce) {
				return ce.code
			}
			return exitUsage
		}
	}
	a.openPlayback()
	a.onClose(a.closeAudio)
	return exitOK
}

// nextStep says what to do about a setup error that does not say it
// already: a file that is missing or cannot be read or written, a WAV or
// JSON file that cannot be decoded.
func nextStep(err error) string {
	var fe *audio.FormatError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "; check the path (and that its folder exists)"
	case errors.Is(err, fs.ErrPermission):
		return "; check the file's permissions, or pick another path"
	case errors.As(err, &fe):
		return "; give a WAV file (PCM 8-32 bit or float, any rate and channels)"
	case errors.As(err, &se), errors.As(err, &te), strings.Contains(err.Error(), "json: unknown field"):
		return "; fix the JSON in that file"
	}
	return ""
}

// codeError is a setup failure with an exit code other than exitUsage.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }

func (e *codeError) Unwrap() error { return e.err }

// onClose registers f to run at exit, after everything registered later.
func (a *app) onClose(f func()) { a.closers = append(a.closers, f) }

// close runs the registered closers in reverse order. The demo ends the
// session itself from here on (the simulated engine closes first), which
// is not the engine going away.
func (a *app) close() {
	a.closing.Store(true)
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// loadInputs reads the card, --scene/--directive and --wav.
func (a *app) loadInputs() error {
	lc, err := loadCard(a.cfg.cardFile, "run the demo again with --card FILE")
	if err != nil {
		return err
	}
	a.card = lc
	name := lc.card.Name()
	a.cardName.Store(&name)
	a.charID = a.cfg.characterID
	if a.charID == "" {
		a.charID = characterID(lc.card.Name())
	}
	if err := a.loadPrompt(); err != nil {
		return err
	}
	if a.cfg.wavFile != "" {
		if a.speech, err = readSpeech(a.cfg.wavFile, a.cfg.lang); err != nil {
			return fmt.Errorf("--wav: %w", err)
		}
	}
	return nil
}

// openFiles creates the --record and --out files.
func (a *app) openFiles() error {
	a.tap = &tap{say: a.cardSent}
	if name := a.cfg.recordFile; name != "" {
		f, err := os.Create(name)
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		bw := bufio.NewWriter(f)
		a.tap.rec = bw
		a.onClose(func() {
			err := bw.Flush() // also any write error met during the run
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				a.con.Printf("rpengine-demo: --record %s: %v (the record is incomplete)", name, err)
			}
		})
	}
	if name := a.cfg.outFile; name != "" {
		w, err := createWAV(name)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		a.out = w
		a.onClose(func() {
			if err := w.Close(); err != nil {
				a.con.Printf("rpengine-demo: --out %s: %v", name, err)
			}
		})
	}
	return nil
}

// startInspector serves the inspector page on the --inspect address; it
// stops at exit, after the server.
func (a *app) startInspector() error {
	if a.cfg.inspect == "" {
		return nil
	}
	in := inspect.New(nil)
	url, stop, err := inspect.Serve(in, a.cfg.inspect)
	if err != nil {
		return fmt.Errorf("--inspect: %w", err)
	}
	a.inspector, a.pageURL = in, url
	a.onClose(stop)
	return nil
}

// startServer starts the library's server: on the loopback port, or on
// the --mailbox folder.
func (a *app) startServer() error {
	ctx, fail := context.WithCancelCause(context.Background())
	a.serving, a.fail = ctx, fail
	opts := &rpengine.ServerOptions{
		ServerVersion: "gamelink rpengine-demo",
		Logger:        a.log,
		Recorder:      a.tap,
		OnSession:     a.onSession,
		OnStop: func(err error) { // the mailbox was taken over, say
			a.serverStopped(err)
			fail(&serverFailed{err})
		},
	}
	if in := a.inspector; in != nil {
		opts.Recorder, opts.Logger = io.MultiWriter(in, a.tap), in.Logger(a.log)
		opts.OnSession = func(info rpengine.SessionInfo, ended bool) { in.OnSession(info, ended); a.onSession(info, ended) }
	}
	var l net.Listener
	if dir := a.cfg.mailbox; dir != "" {
		// The server creates the folder itself, not its parents (Issue #18).
		if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
			return fmt.Errorf("--mailbox %s: cannot create the folders above it: %w; pick a folder you can write to", dir, err)
		}
		opts.Mailbox = &rpengine.MailboxOptions{Dir: dir, IntegrationID: a.cfg.integrationID, DisplayName: "gamelink rpengine-demo"}
	} else {
		var err error
		if l, err = a.listen(); err != nil {
			return err
		}
		opts.Addr, opts.DevelopmentMode = l.Addr().String(), a.cfg.devOrigin
	}
	srv, err := rpengine.NewServer(opts)
	if err != nil {
		if l != nil {
			l.Close()
		}
		return err
	}
	a.srv = srv
	if l == nil {
		// Start returns once the folder is served, or why it cannot be:
		// a folder that cannot be set up fails here, before the banner.
		if err := srv.Start(); err != nil {
			a.serverStopped(err)
			return &serverFailed{err}
		}
	}
	a.serve(l)
	a.banner()
	return nil
}

// listen opens the loopback port, naming it when it is taken.
func (a *app) listen() (net.Listener, error) {
	port := a.cfg.port
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("port %d is already in use (another game or demo is listening there); "+
			"close it, or pick another port with --port (0 picks a free one)", port)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	a.port = l.Addr().(*net.TCPAddr).Port
	return l, nil
}

// serverFailed is the cause of a.serving's end when the server stopped
// with an error (say, another process holds the mailbox folder); it has
// been shown already.
type serverFailed struct{ err error }

func (e *serverFailed) Error() string { return e.err.Error() }

// serverStopped shows why the server stopped, with a hint.
func (a *app) serverStopped(err error) {
	a.con.Printf("rpengine-demo: the server stopped: %s", oneLine(err))
	switch {
	case errors.Is(err, rpengine.ErrMailboxLocked):
		a.con.Printf("hint: another game or demo is serving %s; close it, or pick another folder with --mailbox", a.cfg.mailbox)
	case a.cfg.mailbox != "":
		a.con.Printf("hint: --mailbox takes a folder you can write to (created if missing); pick another path")
	}
}

// serve runs the server on l (nil: the mailbox, which Start serves
// already) until a.close. If it stops with an error, the error is shown at
// once and a.serving ends, which ends every wait for the engine.
func (a *app) serve(l net.Listener) {
	fail := a.fail
	done := make(chan struct{})
	go func() {
		defer close(done)
		if l == nil {
			return
		}
		if err := a.srv.Serve(l); err != nil && !errors.Is(err, rpengine.ErrServerClosed) {
			a.serverStopped(err)
			fail(&serverFailed{err})
		}
	}()
	a.onClose(func() {
		a.closing.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.srv.Shutdown(ctx)
		<-done
		fail(nil)
	})
}

// failure returns the server's failure that ended ctx, if that is what
// ended it.
func failure(ctx context.Context) *serverFailed {
	var f *serverFailed
	if errors.As(context.Cause(ctx), &f) {
		return f
	}
	return nil
}

// startSim connects the simulated engine with --engine sim: over loopback
// WebSocket, or in file mode on the --mailbox folder.
func (a *app) startSim() error {
	if a.cfg.engine != "sim" {
		return nil
	}
	ctx, cancel := context.WithTimeout(a.serving, 10*time.Second)
	defer cancel()
	dial := func(ctx context.Context, o *enginetest.Options) (*enginetest.Engine, error) {
		return enginetest.Dial(ctx, a.socketURL(), o)
	}
	var err error
	if dir := a.cfg.mailbox; dir != "" {
		dial = func(ctx context.Context, o *enginetest.Options) (*enginetest.Engine, error) {
			return enginetest.DialMailbox(ctx, dir, o, nil) // Start set the folder up
		}
	}
	var s *sim
	if err == nil {
		s, err = startSim(ctx, dial, a.cfg.simFaults, a.simLogf)
	}
	if f := failure(ctx); f != nil {
		return &codeError{code: exitUsage, err: f}
	}
	if err != nil {
		return &codeError{code: exitNoEngine, err: fmt.Errorf("the simulated engine could not connect: %w", err)}
	}
	a.sim = s
	a.onClose(func() { _ = s.Close() })
	return nil
}

func (a *app) socketURL() string {
	return "ws://127.0.0.1:" + strconv.Itoa(a.port) + rpengine.SocketPath
}

// banner says where to connect RPEngine, or that replies are simulated.
func (a *app) banner() {
	c := a.con
	sim := a.cfg.engine == "sim"
	if sim {
		c.Printf("rpengine-demo: SIMULATED ENGINE: replies are generated offline by a fake RPEngine (enginetest), not by a model.")
	}
	open := "open https://rpengine.gemtavern.com/#port=" + strconv.Itoa(a.port) + " in a browser"
	if a.cfg.mailbox != "" {
		c.Printf("rpengine-demo: serving the mailbox folder %s (file transport, no socket)", a.cfg.mailbox)
		open = "open https://rpengine.gemtavern.com/ in a browser, select this folder as the game's mailbox"
	} else {
		c.Printf("rpengine-demo: listening on %s (port %d)", a.socketURL(), a.port)
	}
	if !sim {
		c.Printf("rpengine-demo: %s, start the engine there, and enable the microphone in RPEngine if you want /browser-mic.", open)
	}
	if a.pageURL != "" {
		c.Printf("rpengine-demo: inspector page: %s", a.pageURL)
	}
	c.Printf("rpengine-demo: character %q (card %s, id %s)", a.card.card.Name(), a.card.source, a.charID)
	a.cardNotes(a.card)
}

// cardNotes shows what card.Load repaired, why the card may travel
// without targetHash, and the card's greeting.
func (a *app) cardNotes(lc *loadedCard) {
	for _, l := range lc.describeNotes() {
		a.con.Printf("rpengine-demo: %s", l)
	}
	if lc.unsafe != "" {
		a.con.Printf("rpengine-demo: note: %s", lc.unsafe)
	}
	if g := lc.greeting(a.cfg.player); g != "" {
		a.con.Printf("rpengine-demo: greeting: %s", g)
	}
}

// onSession is called on the server's connection goroutine; it only prints.
func (a *app) onSession(info rpengine.SessionInfo, ended bool) {
	if ended {
		if a.closing.Load() {
			return
		}
		a.con.Printf("rpengine-demo: engine disconnected (session %s)", info.ID)
		return
	}
	a.con.Printf("rpengine-demo: engine connected: %s, session %s", peertext.Clip(info.ClientVersion, peertext.LogBytes), info.ID)
}

func (a *app) simLogf(format string, args ...any) {
	a.log.Debug(fmt.Sprintf(format, args...))
}

// openPlayback opens the sound device unless playback is off.
// It is called again when /text-only or /voice turns speech back on.
func (a *app) openPlayback() {
	if a.cfg.noPlayback || a.textOnly || a.noDevice || a.player != nil {
		return
	}
	o, err := audio.OpenDevice(nil) // rpengine/audio keeps ALSA's noise off stderr
	if err != nil {
		a.sayNoDevice(err)
		return
	}
	p, err := o.NewSpeaker(nil)
	if err != nil {
		o.Close()
		a.sayNoDevice(err)
		return
	}
	a.output, a.player = o, p
	if a.inspector != nil {
		a.inspector.AddSpeaker(p)
	}
	a.watchDevice(o)
}

func (a *app) sayNoDevice(err error) {
	if a.noDevice {
		return
	}
	a.noDevice = true
	msg := "speech will not be played"
	if a.cfg.outFile != "" {
		msg += " (it is still written to " + a.cfg.outFile + ")"
	}
	a.log.Debug("rpengine-demo: no audio output", "err", err)
	a.con.Printf("rpengine-demo: no audio output (%s): %s", deviceReason(err), msg)
}

// deviceReason says briefly why a sound device could not be opened.
func deviceReason(err error) string {
	if errors.Is(err, audio.ErrNoDevice) {
		return "no sound device"
	}
	return oneLine(err)
}

func (a *app) closeAudio() {
	if a.recorder != nil {
		a.recorder.Close()
	}
	if a.output != nil {
		a.output.Close()
	}
}

// sceneFile is --scene: the promptScene of docs/rpengine-protocol.md.
type sceneFile struct {
	Kind      string  `json:"kind"`
	Family    string  `json:"family"`
	Label     string  `json:"label"`
	SceneLine string  `json:"sceneLine"`
	Priority  float64 `json:"priority"`
}

// directiveFile is --directive: the promptDirective.
type directiveFile struct {
	ProtocolVersion int    `json:"protocolVersion"`
	SceneContext    string `json:"sceneContext"`
	AutoEventGuide  string `json:"autoEventGuide"`
	DirectUserGuide string `json:"directUserGuide"`
	PromptVersion   string `json:"promptVersion"`
}

// loadPrompt reads --scene and --directive.
func (a *app) loadPrompt() error {
	if a.cfg.sceneFile == "" {
		return nil
	}
	var sc sceneFile
	var d directiveFile
	if err := readJSON(a.cfg.sceneFile, &sc); err != nil {
		return fmt.Errorf("--scene: %w", err)
	}
	if err := readJSON(a.cfg.directiveFile, &d); err != nil {
		return fmt.Errorf("--directive: %w", err)
	}
	a.prompt = &rpengine.Prompt{Mode: "direct_user", Kind: sc.Kind, Family: sc.Family, Label: sc.Label, SceneLine: sc.SceneLine,
		Priority: sc.Priority, SceneContext: d.SceneContext, AutoEventGuide: d.AutoEventGuide, DirectUserGuide: d.DirectUserGuide,
		Version: d.PromptVersion, DirectiveVersion: d.ProtocolVersion}
	return nil
}

func readJSON(name string, v any) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
