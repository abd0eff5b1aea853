package rpengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Sending a request: the line of waiting requests, the capacity gate's
// admission (internal/session, gate.go), the attempts and the engine's
// decision. Every request waits in one FIFO line of the Server and is
// sent only when it is first in line and the live session's gate admits
// it. Reply waits for reply.accepted (or the end of the request); a
// capacity_exceeded before it puts the request back at the head of the
// line until the next capacity.update, bounded by the Reply call's ctx,
// or fails it with ErrBusy under FailFast.
//
// Rejected alternative: a background retry after Reply returned. Nothing
// would bound it but the reply's own timeouts, FailFast could not answer
// ErrBusy, and a later request for the same character could overtake it.

// Reply sends a reply.request and returns its handle once the engine
// has accepted it (reply.accepted), or once the request ended before that
// (the handle's Wait then says why). Invalid requests fail with a
// *FieldError before anything is sent; fields the engine accepts but that
// are probably mistakes are logged as warnings (docs/rpengine-design.md,
// "Outbound validation").
//
// Requests are sent in the order of the calls, only while the engine has
// room for them, counting the requests already sent that its last
// capacity.update does not show yet, and one at a time per character
// until the engine accepted the previous one; Reply waits its turn,
// bounded by ctx, for an engine that is connected and has room. A
// capacity_exceeded refusal is retried after the engine's next
// capacity.update. With FailFast, Reply fails at once with
// ErrNotConnected, or with ErrBusy when the engine has no room or
// refused the request. A request whose ctx has expired is not sent, even
// when there is room for it; if ctx expires after the request was sent,
// it is cancelled on the engine. ctx bounds only this call: use Cancel to
// stop the reply.
func (s *Server) Reply(ctx context.Context, req ReplyRequest) (_ *Reply, err error) {
	defer errd.Wrap(&err, "rpengine: reply")
	p, warns, err := req.payload()
	if err != nil {
		return nil, err
	}
	warns.log(s.opts.Logger, p.RequestID)
	return s.start(ctx, wire.TypeReplyRequest, p, req.Card, false)
}

// Capture starts a voice capture through the RPEngine page's microphone
// (voice.capture.start). The returned Reply carries capture level, state
// and transcript events, then the reply to what the player said. Stop
// ends the recording; Cancel discards it. Capture waits and returns as
// Reply does.
func (s *Server) Capture(ctx context.Context, req CaptureRequest) (_ *Reply, err error) {
	defer errd.Wrap(&err, "rpengine: voice capture")
	p, warns, err := req.payload()
	if err != nil {
		return nil, err
	}
	warns.log(s.opts.Logger, p.RequestID)
	return s.start(ctx, wire.TypeCaptureStart, p, req.Card, true)
}

// errRefused is the outcome of an attempt refused with capacity_exceeded,
// errResync of one refused with card_resync_required.
var (
	errRefused = errors.New("refused for capacity")
	errResync  = errors.New("card resynchronisation required")
)

// start sends a request through the line and the gate and waits for the
// engine's decision, retrying capacity_exceeded refusals and card
// resynchronisations.
func (s *Server) start(ctx context.Context, typ string, p *requestPayload, crd *card.Card, capture bool) (*Reply, error) {
	r := newReply(p.RequestID, capture, s.opts.MaxPendingAudio)
	t := &ticket{r: r, key: card.Key{IntegrationID: p.IntegrationID, CharacterID: p.CharacterID}}
	var c *conn // the session that took the first attempt
	cancel, kind := wire.TypeRequestCancel, "reply"
	if capture {
		cancel, kind = wire.TypeCaptureCancel, "capture"
	}
	note(s.rec, "reply.submitted", submittedNote{p.RequestID, kind, p.IntegrationID, p.CharacterID})
	for retry := false; ; retry = true {
		live, err := s.admit(ctx, t, c, retry)
		switch {
		case err != nil && c != nil:
			c.abort(r, err, "") // refused earlier: nothing to cancel on the engine
			return nil, err
		case err != nil:
			if !errors.As(err, new(*FieldError)) { // a duplicate requestId: that request goes on
				note(s.rec, "reply.ended", endedNote{p.RequestID, err.Error()})
			}
			return nil, err
		case live == nil:
			return r, nil // ended while waiting for a retry
		}
		c = live
		tr, err := c.plan.transfer(t.key, crd)
		if err == nil {
			// ctx may have expired while it waited or was planned: then
			// it is not sent (issue #31).
			err = ctx.Err()
		}
		if err == nil {
			err = c.send(r, typ, p, crd, tr)
		}
		if err != nil {
			c.abort(r, err, "") // a reply the driver had: its end is recorded there
			r.mu.Lock()
			had := r.ctl != nil
			r.mu.Unlock()
			if !had {
				note(s.rec, "reply.ended", endedNote{p.RequestID, err.Error()})
			}
			return nil, err
		}
		rerr, err := r.await(ctx)
		for errors.Is(err, errResync) {
			if err := ctx.Err(); err != nil {
				c.abort(r, err, "") // refused: nothing to cancel on the engine
				return nil, err
			}
			if err := s.resend(c, r, typ, p, crd, t.key, rerr); err != nil {
				c.abort(r, err, "")
				return r, nil // its Wait says why
			}
			rerr, err = r.await(ctx)
		}
		switch {
		case errors.Is(err, errRefused) && s.opts.FailFast:
			err = errd.Chain(ErrBusy, rerr)
			c.abort(r, err, "")
			return nil, err
		case errors.Is(err, errRefused):
			s.opts.Logger.Debug("rpengine: engine refused a request for capacity; retrying after its next capacity.update", "requestId", r.id)
			continue
		case err != nil:
			c.abort(r, err, cancel)
			return nil, err
		}
		return r, nil
	}
}

// resend sends the request again after the engine's card_resync_required
// (rerr), with the planner's snapshot, keeping requestId and eventId. It
// runs on the Reply call's goroutine, which waits for the engine's
// decision, so that the connection's goroutine never plans (issue #17).
func (s *Server) resend(c *conn, r *Reply, typ string, p *requestPayload, crd *card.Card, key card.Key, rerr *RequestError) error {
	r.mu.Lock()
	sent, n := r.sent, r.resyncs
	r.resyncs++
	r.mu.Unlock()
	t, err := c.plan.resync(key, crd, sent, n, rerr)
	if err != nil {
		return err
	}
	return c.send(r, typ, p, crd, t)
}

// await waits, bounded by ctx, for the engine's decision on the request's
// latest attempt: nil once it is accepted or the request ended, errRefused
// (with the engine's error) after a capacity_exceeded, errResync after a
// card_resync_required.
func (r *Reply) await(ctx context.Context) (*RequestError, error) {
	select {
	case <-r.decided:
		return nil, nil
	case <-r.done:
		return nil, nil
	case rerr := <-r.refused:
		return rerr, errRefused
	case rerr := <-r.resync:
		return rerr, errResync
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// admit waits, bounded by ctx, until t is first in line and the live
// session's gate admits it, and returns that session. A ticket put back
// after a refusal (retry) goes first, and belongs to its session (sent,
// the session that took its first attempt). With FailFast it fails at
// once with ErrNotConnected or ErrBusy instead of waiting for an engine
// or for room, but still waits its turn and for its character. It returns
// early, with a nil session and no error, when t's reply ended meanwhile.
func (s *Server) admit(ctx context.Context, t *ticket, sent *conn, retry bool) (*conn, error) {
	s.mu.Lock()
	if retry {
		s.queue = slices.Insert(s.queue, 0, t)
	} else {
		s.queue = append(s.queue, t)
	}
	s.tickets++
	s.mu.Unlock()
	defer s.leave(t)
	var done <-chan struct{}
	if sent != nil {
		done = t.r.done
	}
	waited := "" // the reason of the last reply.waiting note
	for {
		select {
		case <-done:
			return nil, nil
		default:
		}
		s.mu.Lock()
		live, closed, ch := s.live, s.closed, s.changed
		head := s.queue[0] == t
		s.mu.Unlock()
		var what, why string // why: the note's reason
		switch {
		case closed:
			return nil, ErrServerClosed
		case sent != nil && live != sent:
			// A retry belongs to its session, which is ending: its end
			// fails the reply (done above).
			what, why = "the request's engine connection to end", "engine"
		case live == nil:
			if s.opts.FailFast {
				return nil, ErrNotConnected
			}
			what, why = "an engine connection", "engine"
		case !head:
			what, why = "earlier requests to be sent", "queue"
		default:
			a, err := live.admit(t.r, t.key, retry)
			switch {
			case err != nil:
				return nil, err
			case a == session.AdmitOK:
				return live, nil
			case a == session.AdmitHeld:
				what, why = "the engine to accept an earlier request for the same character", "character"
			case a == session.AdmitEnded:
				// Its connection is lost and it is being taken down: as
				// when no session is live.
				if s.opts.FailFast {
					return nil, ErrNotConnected
				}
				what, why = "an engine connection", "engine"
			default:
				if s.opts.FailFast {
					return nil, ErrBusy
				}
				what, why = "the engine to accept requests", "capacity"
			}
		}
		if why != waited && s.rec != nil {
			waited = why
			s.noteWaiting(t.r.id, why, live)
		}
		select {
		case <-ch:
		case <-done:
			return nil, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("rpengine: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// noteWaiting records that request id waits for reason (reply.waiting),
// with the live session's last capacity.update and, waiting for
// capacity, the requests its gate counts on top of it, both read at one
// moment of the driver's (read apart, a capacity.update that came in
// between counted a request in neither).
func (s *Server) noteWaiting(id, reason string, live *conn) {
	n := waitingNote{RequestID: id, Reason: reason}
	if live != nil {
		read := func() {
			info := live.snapshot()
			n.QueueDepth, n.QueueLimit = info.QueueDepth, info.QueueLimit
		}
		read() // the session may end before the call runs
		if reason == "capacity" {
			_ = live.call(func(time.Time) { read(); n.InFlight = live.core.InFlight() })
		}
	}
	note(s.rec, "reply.waiting", n)
}

// leave takes t out of the line; the next ticket may be first now.
func (s *Server) leave(t *ticket) {
	s.mu.Lock()
	if i := slices.Index(s.queue, t); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	s.notifyLocked()
	s.mu.Unlock()
}
