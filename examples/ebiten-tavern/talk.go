package main

// This file is the game's whole use of package rpengine: the server the
// RPEngine page connects to, and one turn of conversation. The rest of the
// game sees only link, linkState, turn and turnState.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
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
	srv  *rpengine.Server
	done chan struct{} // closed when the server stops

	mu  sync.Mutex // guards following
	err error      // why the server stopped, if it failed
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
	Err               error  // the server stopped
}

// openLink starts the server on the loopback port (0 picks a free one), or
// on the mailbox folder when mailbox is not "".
func openLink(port int, mailbox string) (*link, error) {
	opts := &rpengine.ServerOptions{ServerVersion: "gamelink ebiten-tavern", Logger: quietLogger()}
	var l net.Listener
	if mailbox != "" {
		opts.Mailbox = &rpengine.MailboxOptions{Dir: mailbox, IntegrationID: integrationID, DisplayName: "The Drowned Lantern"}
	} else {
		var err error
		if l, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
			return nil, fmt.Errorf("port %d: %w (another game may be listening there; try --port 0)", port, err)
		}
		opts.Addr = l.Addr().String()
	}
	srv, err := rpengine.NewServer(opts)
	if err != nil {
		if l != nil {
			l.Close()
		}
		return nil, err
	}
	k := &link{srv: srv, done: make(chan struct{})}
	go k.serve(l)
	return k, nil
}

func (k *link) serve(l net.Listener) {
	defer close(k.done)
	var err error
	if l != nil {
		err = k.srv.Serve(l)
	} else {
		err = k.srv.ListenAndServe()
	}
	if err != nil && !errors.Is(err, rpengine.ErrServerClosed) {
		k.mu.Lock()
		k.err = err
		k.mu.Unlock()
	}
}

// socketURL is the address an engine dials (the simulated one, here).
func (k *link) socketURL() string { return k.srv.SocketURL() }

// close stops the server; replies in flight end.
func (k *link) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = k.srv.Shutdown(ctx)
	<-k.done
}

// state reads the connection's state; it is cheap enough for every frame.
func (k *link) state() linkState {
	s := linkState{OpenURL: k.srv.URL(), Mailbox: k.srv.MailboxDir()}
	if s.Mailbox != "" {
		s.OpenURL = rpengine.OriginProduction + "/"
	}
	k.mu.Lock()
	s.Err = k.err
	k.mu.Unlock()
	info, live := k.srv.Session()
	s.Connected, s.Engine = live, info.ClientVersion
	if c, ok := k.srv.Capacity(); ok {
		s.Queue, s.QueueLimit, s.QueueKnown, s.Accepting = c.QueueDepth, c.QueueLimit, c.Known, c.AcceptingRequests
	}
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
		Text:          text,
		Output:        rpengine.Output{Language: o.lang},
	}
	if len(speech) > 0 {
		req.Audio = &rpengine.AudioInput{Format: "pcm_s16le", SampleRate: audio.CaptureRate, Channels: 1, Data: pcm16(speech)}
	}
	if !o.textOnly {
		req.Output.Audio = &rpengine.OutputAudio{Voice: o.voice}
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
			_ = r.Cancel(cctx) // the reply then ends with a *CancelledError
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
		case rpengine.EventEnd:
			_ = sp.End(r.RequestID()) // every segment came: let the speech end
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
	var ce *rpengine.CancelledError
	switch {
	case errors.As(err, &ce) && ce.Reason == "requested_by_game", errors.Is(err, context.Canceled):
		return "You interrupted."
	case errors.As(err, &ce):
		return "The engine cancelled the reply (" + ce.Reason + ")."
	case errors.As(err, &re):
		return "The engine refused: " + re.Code + ": " + re.Message
	case errors.Is(err, rpengine.ErrConnectionLost):
		return "The engine went away before the reply ended."
	case errors.Is(err, rpengine.ErrNoAnswer):
		return "The engine did not answer in time."
	}
	return err.Error()
}

// pcm16 encodes samples as little-endian 16-bit PCM, RPEngine's pcm_s16le.
func pcm16(samples []int16) []byte {
	b := make([]byte, 0, 2*len(samples))
	for _, s := range samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}
