package main

// This file is the game's whole use of package rpengine: the server the
// RPEngine page connects to, and one turn of conversation. The rest of the
// game sees only link, linkState, turn and turnState.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// integrationID names this game to the engine (and in the mailbox's
// manifest).
const integrationID = "ebiten-tavern"

// defaultPort is the loopback port the RPEngine page connects to unless
// told otherwise.
const defaultPort = rpengine.DefaultPort

// link is the game's side of RPEngine: the library's loopback server, or
// the file mailbox, and the turns sent through it.
type link struct {
	srv     *rpengine.Server
	mailbox string // the mailbox folder, or ""

	inspector     *inspect.Inspector // --inspect, or nil
	pageURL       string             // the inspector page's, token included
	stopInspector func()
}

// linkState is what the scene shows of the connection.
type linkState struct {
	Connected         bool
	Engine            string // the engine's client version
	Queue, QueueLimit int    // the engine's queue, once it said
	QueueKnown        bool
	Accepting         bool
	OpenURL           string // what the player opens to connect the engine
	Mailbox           string // the mailbox folder, or ""
}

// openLink starts the server on the loopback port (0 picks a free one), or
// on the mailbox folder when mailbox is not "", and the inspector page on
// the loopback address inspectAddr unless it is "".
func openLink(port int, mailbox, inspectAddr string) (*link, error) {
	k := &link{mailbox: mailbox}
	opts := &rpengine.ServerOptions{ServerVersion: "gamelink ebiten-tavern", Logger: quietLogger(), Addr: "127.0.0.1:" + strconv.Itoa(port)}
	if mailbox != "" {
		opts.Mailbox = &rpengine.MailboxOptions{Dir: mailbox, IntegrationID: integrationID, DisplayName: "The Drowned Lantern"}
	}
	if inspectAddr != "" {
		in := inspect.New(nil)
		url, stop, err := inspect.Serve(in, inspectAddr)
		if err != nil {
			return nil, fmt.Errorf("--inspect: %w", err)
		}
		k.inspector, k.pageURL, k.stopInspector = in, url, stop
		opts.Recorder, opts.Logger, opts.OnSession = in, in.Logger(opts.Logger), in.OnSession
	}
	srv, err := rpengine.NewServer(opts)
	if err == nil {
		err = srv.Start() // bound (or the folder set up) when it returns
		if err != nil && mailbox == "" {
			err = fmt.Errorf("port %d: %w (another game may be listening there; try --port 0)", port, err)
		}
	}
	if err != nil {
		if k.stopInspector != nil {
			k.stopInspector()
		}
		return nil, err
	}
	k.srv = srv
	return k, nil
}

// hear shows sp's heard position on the inspector page, if there is one.
func (k *link) hear(sp *audio.Speaker) {
	if k.inspector != nil {
		k.inspector.AddSpeaker(sp)
	}
}

// socketURL is the address an engine dials (the simulated one, here).
func (k *link) socketURL() string { return k.srv.SocketURL() }

// close stops the server; replies in flight end.
func (k *link) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = k.srv.Shutdown(ctx)
	if k.stopInspector != nil {
		k.stopInspector()
	}
}

// state reads the connection's state; it is cheap enough for every frame.
func (k *link) state() linkState {
	s := linkState{OpenURL: k.srv.URL(), Mailbox: k.mailbox}
	if s.Mailbox != "" {
		s.OpenURL = rpengine.OriginProduction + "/"
	}
	info, live := k.srv.Session()
	s.Connected, s.Engine = live, info.ClientVersion
	s.Queue, s.QueueLimit, s.QueueKnown, s.Accepting = info.QueueDepth, info.QueueLimit, info.QueueLimit > 0, info.Accepting
	return s
}

// turn is one line said to the character and its reply, run on a
// goroutine of its own; the game reads it each frame with state.
type turn struct {
	stop func()        // the player interrupts: see interrupt
	done chan struct{} // closed when the turn's goroutine has ended

	mu          sync.Mutex // guards following
	st          turnState
	interrupted bool
}

// turnState is what the scene shows of a turn.
type turnState struct {
	Reply   string // the request id, once sent ("" while waiting for an engine)
	Text    string // the reply's display text so far
	Ended   bool
	Err     error // why the reply failed, once Ended
	Samples int   // speech samples received, at Rate
	Rate    int   // Hz
}

// sayOptions is the request's content beyond the line itself.
type sayOptions struct {
	voice, lang string
	textOnly    bool
}

// say sends text, or speech (16 kHz mono, as the Recorder makes it), to
// the character, and plays the reply's speech on sp. It waits for an
// engine as long as it takes (the scene shows that it waits).
func (k *link) say(ch *character, text string, speech []int16, o sayOptions, sp *audio.Speaker) *turn {
	req := rpengine.ReplyRequest{
		IntegrationID: integrationID,
		CharacterID:   ch.id,
		Card:          ch.card,
		PlayerName:    playerName,
		Text:          text,
		Speech:        speech, // what audio.Recorder gave, as it is
		Language:      o.lang,
	}
	if !o.textOnly {
		req.Voice = o.voice
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &turn{stop: cancel, done: make(chan struct{})}
	go t.run(ctx, k.srv, req, sp)
	return t
}

// run sends the request and plays its reply until it ends. When ctx ends
// (the player interrupts) it cancels the reply and reads on to its end.
func (t *turn) run(ctx context.Context, srv *rpengine.Server, req rpengine.ReplyRequest, sp *audio.Speaker) {
	defer close(t.done)
	r, err := srv.Reply(ctx, req) // waits for an engine
	if err != nil {
		t.end(err)
		return
	}
	t.mu.Lock()
	t.st.Reply = r.RequestID()
	t.mu.Unlock()
	for {
		ev, err := r.Next(ctx)
		if err != nil { // interrupted
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = r.Cancel(cctx) // the reply then ends with rpengine.ErrCancelled
			cancel()
			ctx = context.Background() // every reply ends
			continue
		}
		switch ev.Kind {
		case rpengine.EventText:
			t.mu.Lock()
			t.st.Text = ev.Text
			t.mu.Unlock()
		case rpengine.EventSegment:
			t.mu.Lock()
			t.st.Samples += len(ev.Segment.Samples)
			t.st.Rate = ev.Segment.SampleRate
			quiet := t.interrupted
			t.mu.Unlock()
			if quiet {
				continue
			}
			if err := sp.Enqueue(r.RequestID(), ev.Segment); err != nil {
				t.fail(fmt.Errorf("speech: %w", err)) // the text goes on
			}
		case rpengine.EventAudioEnd:
			_ = sp.End(r.RequestID()) // every segment came: let the speech end
		case rpengine.EventEnd:
			t.end(ev.Err)
			return
		}
	}
}

// interrupt stops the turn: the wait for an engine, or the reply and its
// speech. It does not block the game loop.
func (t *turn) interrupt(sp *audio.Speaker) {
	t.mu.Lock()
	t.interrupted = true // no more segments are enqueued
	t.mu.Unlock()
	sp.Interrupt() // 5 ms fade, and what was queued is dropped
	t.stop()
}

// end records that the turn ended, and why if it failed.
func (t *turn) end(err error) {
	t.mu.Lock()
	if t.interrupted && (errors.Is(err, rpengine.ErrCancelled) || errors.Is(err, context.Canceled)) {
		err = errInterrupted
	}
	t.mu.Unlock()
	t.fail(err)
	t.mu.Lock()
	t.st.Ended = true
	t.mu.Unlock()
}

// fail records what went wrong; the first error is kept.
func (t *turn) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.Err == nil {
		t.st.Err = err
	}
}

// state reads the turn; it is cheap enough for every frame.
func (t *turn) state() turnState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}

// describe says in a few words what went wrong with a turn.
func describe(err error) string {
	if err == nil {
		return ""
	}
	var re *rpengine.RequestError
	switch {
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		return "You interrupted."
	case errors.Is(err, rpengine.ErrCancelled):
		return "The engine cancelled the reply (" + strings.TrimPrefix(err.Error(), "rpengine: reply cancelled: ") + ")."
	case errors.As(err, &re):
		return "The engine refused: " + re.Code + ": " + re.Message
	case errors.Is(err, rpengine.ErrConnectionLost):
		return "The engine went away before the reply ended."
	case errors.Is(err, rpengine.ErrNoAnswer):
		return "The engine did not answer in time."
	}
	return err.Error()
}

// errInterrupted ends a turn the player interrupted.
var errInterrupted = errors.New("interrupted by the player")
