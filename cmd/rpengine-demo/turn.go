package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine"
)

// outcome is how a turn ended.
type outcome struct {
	text        string // the reply's final display text
	err         error  // nil: completed
	code        int    // exit code for a scripted run
	interrupted bool   // the player pressed Ctrl-C (the reply was cancelled)
	quit        bool   // the player pressed Ctrl-C twice: leave now
	shown       bool   // some of the reply's text is on the terminal
}

// speech is the player's recorded speech: 16 kHz mono samples, and the
// language to tell the engine ("" to let it detect).
type speech struct {
	samples []int16
	lang    string
}

// request builds the reply.request for one event.
func (a *app) request(text string, sp *speech) rpengine.ReplyRequest {
	req := rpengine.ReplyRequest{
		IntegrationID: a.cfg.integrationID,
		CharacterID:   a.charID,
		Card:          a.card.card,
		EventID:       a.newEventID(),
		Text:          text,
		Language:      a.lang,
		PlayerName:    a.cfg.player,
		Prompt:        a.prompt,
	}
	if sp != nil {
		req.Speech, req.SpeechLanguage = sp.samples, sp.lang
	}
	if !a.textOnly {
		req.Voice = a.voice
	}
	return req
}

// capacityGrace is how long a new session may take to send capacity.update.
// The engine sends it right after welcome, so the grace runs out only with
// an engine that never sends one; 500 ms was too short on a loaded machine.
const capacityGrace = 2 * time.Second

// cancelGrace is how long a cancelled reply may take to end.
const cancelGrace = 5 * time.Second

// terminated reports whether sig asks the demo to stop (SIGTERM), as
// opposed to the player's Ctrl-C.
func terminated(sig os.Signal) bool { return sig == syscall.SIGTERM }

// newEventID returns a unique eventId; a turn sent again keeps its own.
func (a *app) newEventID() string {
	a.events++
	return fmt.Sprintf("evt-%d-%d", time.Now().UnixNano(), a.events)
}

// turn sends req and consumes its reply until it ends. When the connection
// is lost, superseded or closed before the reply ends (or the engine
// cancels it with connection_lost), it waits up to --wait for an engine
// and sends the turn again on the new session, as often as that happens,
// unless some of the reply's text was shown already: the player would
// then read it twice (Issue #31), so what arrived is kept and said to be
// cut. stream says whether reply text streams to stdout as it arrives.
func (a *app) turn(req rpengine.ReplyRequest, stream bool) outcome {
	var mark int64
	if a.out != nil {
		mark = a.out.Mark()
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 && a.out != nil {
			if err := a.out.Rewind(mark); err != nil {
				a.con.Printf("rpengine-demo: --out: %v", err)
				return outcome{err: err, code: exitEngineError}
			}
		}
		r, o := a.send(func(ctx context.Context) (*rpengine.Reply, error) { return a.srv.Reply(ctx, req) }, attempt > 0)
		if r == nil {
			if o.err != nil && errors.Is(o.err, rpengine.ErrConnectionLost) {
				a.con.Printf("rpengine-demo: %s; sending the turn again", oneLine(o.err))
				time.Sleep(50 * time.Millisecond) // let the dead session end
				continue
			}
			return o
		}
		o = a.consume(r, stream, false)
		if o.err == nil || o.interrupted || !errors.Is(o.err, rpengine.ErrConnectionLost) {
			return o
		}
		if o.shown {
			a.con.Printf("rpengine-demo: the engine went away before the reply ended (%s): "+
				"the reply above may be cut short; the turn is not sent again", oneLine(o.err))
			o.code = exitEngineError
			return o
		}
		a.con.Printf("rpengine-demo: the engine went away before the reply ended (%s); "+
			"waiting %s for it to come back, then sending the turn again", oneLine(o.err), a.waitText())
	}
}

// send waits for an engine (see waitBounded) and sends the request; again
// says the wait was already announced. SIGINT while waiting quits; the
// line editor's Ctrl-C abandons the turn. It returns the reply, or nil
// and the outcome.
func (a *app) send(start func(context.Context) (*rpengine.Reply, error), again bool) (*rpengine.Reply, outcome) {
	if _, live := a.srv.Session(); !live && !again {
		a.con.Printf("rpengine-demo: waiting %s for the engine to connect...", a.waitText())
	}
	ctx, cancel := a.waitContext()
	defer cancel()
	stop, interrupted := a.interruptible(cancel)
	err := a.waitReady(ctx)
	var r *rpengine.Reply
	if err == nil {
		// Before the request: Reply returns once the engine accepted it,
		// and the queue then counts it (issue #15).
		a.showSession()
		r, err = start(ctx)
	}
	stop()
	if f := failure(ctx); f != nil { // shown when it happened
		return nil, outcome{err: f, code: exitUsage, quit: true}
	}
	switch {
	case *interrupted != nil:
		if r != nil {
			a.cancelReply(r)
		}
		if terminated(*interrupted) {
			a.con.Printf("rpengine-demo: terminated (SIGTERM)")
			return nil, outcome{err: errors.New("terminated"), code: exitTerminated, interrupted: true, quit: true}
		}
		_, key := (*interrupted).(ctrlC)
		if key {
			a.con.Printf("rpengine-demo: interrupted: the turn is dropped")
		}
		return nil, outcome{err: errors.New("interrupted"), code: exitInterrupted, interrupted: true, quit: !key}
	case err == nil:
		a.tap.said()
		return r, outcome{}
	case errors.Is(err, context.DeadlineExceeded):
		msg := "no engine connected"
		if info, live := a.srv.Session(); live {
			// "Queue full" only when the engine said so: a slow engine
			// that has not answered yet is not a full one.
			msg = "the engine did not accept the request"
			if !info.Accepting {
				msg = "the engine did not accept requests (queue full)"
			}
		}
		a.con.Printf("rpengine-demo: %s within --wait %v", msg, a.cfg.wait)
		return nil, outcome{err: err, code: exitNoEngine}
	default:
		var fe *rpengine.FieldError
		if errors.As(err, &fe) {
			a.con.Printf("rpengine-demo: invalid request: %v", err)
			return nil, outcome{err: err, code: exitUsage}
		}
		if !errors.Is(err, rpengine.ErrConnectionLost) {
			a.con.Printf("rpengine-demo: %s", oneLine(err))
		}
		return nil, outcome{err: err, code: exitEngineError}
	}
}

// waitBounded reports whether waits for the engine end after --wait: in
// scripted mode, or when --wait was given. Interactively a player may take
// a while to open the page, and can always press Ctrl-C.
func (a *app) waitBounded() bool { return a.cfg.scripted() || a.cfg.waitSet }

// waitContext bounds one wait for an engine.
func (a *app) waitContext() (context.Context, context.CancelFunc) {
	if a.waitBounded() {
		return context.WithTimeout(a.serving, a.cfg.wait)
	}
	return context.WithCancel(a.serving)
}

// waitText describes the bound of a wait, for messages.
func (a *app) waitText() string {
	if a.waitBounded() {
		return "up to " + a.cfg.wait.String()
	}
	return "(Ctrl-C quits)"
}

// waitReady waits for a live session, then gives the engine up to
// capacityGrace to send its first capacity.update (sent right after
// welcome), so that work is submitted knowing whether the engine accepts
// it, as the protocol asks. (The server makes a session live only once
// welcome is written, so nothing can overtake welcome.)
func (a *app) waitReady(ctx context.Context) error {
	if _, err := a.srv.WaitSession(ctx); err != nil {
		return err
	}
	grace := time.NewTimer(capacityGrace)
	defer grace.Stop()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if info, ok := a.srv.Session(); !ok || info.QueueLimit > 0 {
			return nil // known, or the session ended: Reply waits for the next
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-grace.C:
			return nil
		case <-t.C:
		}
	}
}

// interruptible calls cancel on the next Ctrl-C or SIGTERM until stop is
// called; after stop, *interrupted is the signal, or nil.
func (a *app) interruptible(cancel context.CancelFunc) (stop func(), interrupted *os.Signal) {
	done, ended := make(chan struct{}), make(chan struct{})
	flag := new(os.Signal)
	go func() {
		defer close(ended)
		select {
		case sig := <-a.sigs:
			*flag = sig
			cancel()
		case <-done:
		}
	}()
	return func() { close(done); <-ended }, flag
}

// showSession shows the engine's capacity once per session.
func (a *app) showSession() {
	info, live := a.srv.Session()
	if !live || info.ID == a.shownSession {
		return
	}
	if info.QueueLimit > 0 { // else shown at the next turn, once known
		a.shownSession = info.ID
		a.con.Printf("rpengine-demo: engine queue %d/%d, accepting requests: %v", info.QueueDepth, info.QueueLimit, info.Accepting)
	}
}

// cardSent says how the card travelled, when that is news: the first
// transfer, and every one that is not a reference (tap.said).
func (a *app) cardSent(mode string, size int, first bool) {
	if mode == "reference" && !first {
		a.log.Debug("rpengine-demo: card sent by reference")
		return
	}
	a.con.Printf("rpengine-demo: card %q sent as %s (%d bytes)", *a.cardName.Load(), mode, size)
}

// cancelReply sends request.cancel, bounded.
func (a *app) cancelReply(r *rpengine.Reply) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Cancel(ctx); err != nil {
		a.log.Debug("rpengine-demo: cancel", "err", err)
	}
	if a.player != nil {
		a.player.Interrupt()
	}
}

// consume reads the reply's events until it ends: text streams (when
// stream is set), segments go to the player and --out. Ctrl-C cancels the
// reply; a second one quits at once. For a capture, Enter stops recording.
func (a *app) consume(r *rpengine.Reply, stream, capture bool) outcome {
	evs, stop := pump(r)
	defer stop()
	v := &view{stream: stream}
	var enter <-chan string
	if capture {
		enter = a.lines
	}
	var giveUp <-chan time.Time // armed by a cancellation the engine may not answer
	for {
		select {
		case <-giveUp:
			a.con.Printf("rpengine-demo: the engine did not confirm the cancellation; quitting")
			v.o.quit, v.o.code = true, exitInterrupted
			return v.o
		case sig := <-a.sigs:
			if terminated(sig) {
				// A service manager or kill asks to stop: no second chance.
				a.con.Printf("rpengine-demo: terminated (SIGTERM): cancelling the reply and quitting")
				a.cancelReply(r)
				v.o.interrupted, v.o.quit, v.o.code = true, true, exitTerminated
				return v.o
			}
			if v.o.interrupted {
				a.con.Printf("rpengine-demo: interrupted again: quitting")
				v.o.quit, v.o.code = true, exitInterrupted
				return v.o
			}
			v.o.interrupted = true
			a.con.Printf("rpengine-demo: interrupted: cancelling the reply (Ctrl-C again to quit)")
			a.cancelReply(r)
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			giveUp = t.C
		case line, ok := <-enter:
			enter = nil
			a.stopCapture(r, line, ok)
		case ev := <-evs:
			if ev.Kind == rpengine.EventEnd {
				if stream {
					a.con.EndText()
				}
				return a.ended(r, ev.Err, v.o)
			}
			a.show(r, v, ev)
		}
	}
}

// view is what consume has shown of a reply so far.
type view struct {
	stream  bool   // reply text streams to stdout
	printed string // the text shown so far
	o       outcome
	capture rpengine.CaptureStatus // the browser capture as last shown
}

// capture shows a browser capture's progress: the level as a meter, and
// each new state and the transcript on lines of their own.
func (a *app) capture(v *view, st rpengine.CaptureStatus) {
	if st.State != v.capture.State {
		a.con.Printf("rpengine-demo: browser capture: %s (%.1fs)", peertext.Clip(st.State, peertext.LogBytes), st.Elapsed.Seconds())
	}
	if st.Transcript != v.capture.Transcript {
		a.con.Printf("rpengine-demo: you said: %s", peertext.Quote(st.Transcript, peertext.LineBytes))
	}
	if st.Elapsed != v.capture.Elapsed && st.State == v.capture.State {
		a.con.Meter(fmt.Sprintf("browser mic %5.1fs [%s]", st.Elapsed.Seconds(), meter(st.RMS*3)))
	}
	v.capture = st
}

// pump forwards the reply's events to a channel until EventEnd; stop ends
// it early and waits for it.
func pump(r *rpengine.Reply) (<-chan rpengine.Event, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	evs, done := make(chan rpengine.Event), make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := r.Next(ctx)
			if err != nil {
				return
			}
			select {
			case evs <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Kind == rpengine.EventEnd {
				return
			}
		}
	}()
	return evs, func() { cancel(); <-done }
}

// show handles one event other than EventEnd.
func (a *app) show(r *rpengine.Reply, v *view, ev rpengine.Event) {
	switch ev.Kind {
	case rpengine.EventText:
		if v.stream {
			v.printed = a.streamText(v.printed, ev.Text)
			v.o.shown = v.printed != ""
		}
		v.o.text = ev.Text
	case rpengine.EventSegment:
		a.segment(r, ev)
	case rpengine.EventAudioEnd:
		if a.player != nil { // every segment came: the speech can end
			_ = a.player.End(r.RequestID())
		}
	case rpengine.EventCapture:
		a.capture(v, ev.Capture)
	case rpengine.EventAnomaly:
		a.log.Debug("rpengine-demo: stream anomaly", "detail", ev.Anomaly.String())
	}
}

// stopCapture ends a browser capture's recording (Enter, or EOF). A line
// typed instead of a bare Enter is kept as the next event.
func (a *app) stopCapture(r *rpengine.Reply, line string, ok bool) {
	if ok && strings.TrimSpace(line) != "" {
		a.pending = append(a.pending, line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		a.log.Debug("rpengine-demo: stop capture", "err", err)
	}
}

// streamText prints what text adds to printed and returns the new printed
// text. When the engine's completed text differs from the deltas shown,
// the correction is printed on a line of its own.
func (a *app) streamText(printed, text string) string {
	if rest, ok := strings.CutPrefix(text, printed); ok {
		a.con.Text(rest)
		return text
	}
	a.con.EndText()
	a.con.Text(text)
	return text
}

// segment plays a complete sentence and writes it to --out.
func (a *app) segment(r *rpengine.Reply, ev rpengine.Event) {
	s := ev.Segment
	if a.out != nil {
		if err := a.out.Write(s.Samples, s.SampleRate); err != nil && !a.outFailed {
			a.outFailed = true
			a.con.Printf("rpengine-demo: --out: %v", err)
		}
	}
	if a.player == nil {
		return
	}
	err := a.player.Enqueue(r.RequestID(), s)
	if err != nil {
		a.con.Printf("rpengine-demo: playback: %v", err)
	}
}

// ended turns the reply's end into an outcome.
func (a *app) ended(r *rpengine.Reply, err error, o outcome) outcome {
	o.err = err
	if err == nil {
		if res, werr := r.Wait(context.Background()); werr == nil {
			o.text = res.Text
		}
		if o.interrupted {
			a.con.Printf("rpengine-demo: the reply completed before the cancellation")
			o.code = exitInterrupted
		}
		return o
	}
	var re *rpengine.RequestError
	switch {
	case o.interrupted:
		a.con.Printf("rpengine-demo: reply cancelled")
		o.code = exitInterrupted
	case errors.Is(err, rpengine.ErrConnectionLost):
		o.code = exitNoEngine // only if not retried
	case errors.As(err, &re):
		a.con.Printf("rpengine-demo: engine error %s: %s", peertext.Clip(re.Code, peertext.LogBytes), peertext.Clip(re.Message, peertext.LineBytes))
		if re.Code == "invalid_character_card" {
			a.con.Printf("hint: the card passed this library's checks but the engine refused it; " +
				"please report it with the card and a --record FILE.jsonl of the session")
		}
		o.code = exitEngineError
	case errors.Is(err, rpengine.ErrCancelled):
		a.con.Printf("rpengine-demo: reply cancelled by the engine: %s", strings.TrimPrefix(oneLine(err), "rpengine: reply cancelled: "))
		o.code = exitEngineError
	default:
		a.con.Printf("rpengine-demo: reply failed: %s", oneLine(err))
		o.code = exitEngineError
	}
	return o
}
