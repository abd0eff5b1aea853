package neuro

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gamelink-go/gamelink/internal/backoff"
	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// dialOnce makes one connection attempt, bounded by ctx, by
// HandshakeTimeout and by Close. A failure is a *DialError.
func (c *Client) dialOnce(ctx context.Context) (conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.HandshakeTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()
	cn, err := c.dial(ctx, c.o.URL)
	if err != nil {
		return nil, &DialError{URL: c.o.URL, Err: err}
	}
	return cn, nil
}

// connectLoop serves the connection Connect made, then reconnects with
// capped exponential back-off whenever it is lost, until Close. The
// first failed attempt of an outage is logged as a warning, later ones at
// debug level, so that a server that stays down does not flood the log.
func (c *Client) connectLoop(cn conn) {
	defer c.wg.Done()
	b := backoff.Backoff{Min: c.o.ReconnectMin, Max: c.o.ReconnectMax}
	for {
		err := c.serve(c.life, cn)
		if c.life.Err() != nil {
			return
		}
		c.emit(Disconnected{Err: err})
		b.Reset()
		for failures := 0; ; failures++ {
			if backoff.Wait(c.life, b.Next()) != nil {
				return
			}
			cn, err = c.dialOnce(c.life)
			if err == nil {
				break
			}
			if c.life.Err() != nil {
				return
			}
			level := slog.LevelDebug
			if failures == 0 {
				level = slog.LevelWarn
			}
			c.o.Logger.Log(c.life, level, "neuro: reconnect failed; retrying with back-off", "err", err)
		}
	}
}

// serve runs one connection: queue the startup and full registration,
// then read and write until either side fails.
func (c *Client) serve(ctx context.Context, conn conn) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gen := c.onConnect()
	c.emit(Connected{URL: c.o.URL})
	errc := make(chan error, 2)
	c.wg.Add(2)
	go func() { defer c.wg.Done(); errc <- c.writeLoop(cctx, conn) }()
	go func() { defer c.wg.Done(); errc <- c.readLoop(cctx, conn, gen) }()
	err := <-errc
	cancel()
	conn.Close()
	<-errc
	c.onDisconnect()
	return err
}

// onConnect prepares the queue for a new connection: startup, then one
// actions/register of the whole desired set, then the outstanding force if
// it was already sent on the previous connection, then whatever was queued
// (in order). Registration diffs queued for the old connection are dropped:
// startup clears the server's set and the full register replaces them.
func (c *Client) onConnect() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.connected = true
	// Ids belong to a connection: a restarted server counts from "0"
	// again, and answering a stale id is always safe.
	clear(c.answered)
	c.ansLen, c.ansNext = 0, 0
	rest := slices.DeleteFunc(c.queue, func(q queued) bool {
		return q.cmd == cmdRegister || q.cmd == cmdUnregister || q.cmd == cmdResult
	})
	head := []queued{{cmd: cmdStartup, b: c.mustEncode(cmdStartup, nil)}}
	if es := c.reg.all(); len(es) > 0 {
		head = append(head, queued{cmd: cmdRegister, b: c.mustEncode(cmdRegister, registerData{Actions: wireActions(es)}), full: true})
	}
	if h := c.force; h != nil {
		h.sent = false
	}
	if h := c.force; h != nil && !slices.ContainsFunc(rest, func(q queued) bool { return q.force == h }) {
		head = append(head, queued{cmd: cmdForce, b: h.msg, force: h})
	}
	c.queue = append(head, rest...)
	return c.gen
}

func (c *Client) mustEncode(cmd string, data any) []byte {
	b, err := encodeOut(c.game, cmd, data)
	if err != nil {
		panic("neuro: encode " + cmd + ": " + err.Error()) // only plain structs are encoded
	}
	return b
}

// onDisconnect drops what cannot survive the connection: results (their
// ids are stale; the server discards them) and registration diffs.
func (c *Client) onDisconnect() {
	c.mu.Lock()
	c.connected = false
	c.queue = slices.DeleteFunc(c.queue, func(q queued) bool {
		if q.cmd == cmdResult {
			c.noteLocked(jsonl.Out, "dropped: connection lost before the result was sent", q.b)
			return true
		}
		return q.cmd == cmdRegister || q.cmd == cmdUnregister
	})
	c.unlockRecording()
}

// writeLoop sends queued messages in order. A message whose write fails
// stays at the head of the queue for the next connection.
func (c *Client) writeLoop(ctx context.Context, conn conn) error {
	for {
		c.mu.Lock()
		// Wait when there is nothing to send, or when the head is a force
		// and Neuro waits for a result: she cannot take a force then
		// (Gary: prot/force/while_pending_result), so it is held until the
		// result is queued ahead of it, which wakes us.
		if len(c.queue) == 0 || c.queue[0].cmd == cmdForce && c.pendingLocked() {
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-c.wake:
				continue
			}
		}
		q := c.queue[0]
		c.queue = c.queue[1:]
		if q.force != nil {
			// Marked before the write: her answer may arrive before
			// Write returns. A failed write re-queues it, and the next
			// connect clears the mark.
			q.force.sent = true
		}
		c.mu.Unlock()
		c.rec.Record(jsonl.Out, q.b)
		err := conn.Write(ctx, q.b)
		c.mu.Lock()
		if err != nil {
			c.queue = append([]queued{q}, c.queue...)
			c.mu.Unlock()
			return err
		}
		if len(c.queue) == 0 {
			close(c.drained)
			c.drained = make(chan struct{})
		}
		c.mu.Unlock()
	}
}

// readLoop handles incoming messages until the connection fails.
func (c *Client) readLoop(ctx context.Context, conn conn, gen uint64) error {
	for n := 0; ; n++ {
		b, err := conn.Read(ctx)
		if err != nil {
			if _, ok := err.(*ProtocolError); ok { // a frame the server never sends
				c.o.Logger.Warn("neuro: bad incoming message", "err", err)
			}
			return err
		}
		c.rec.Record(jsonl.In, b)
		if c.o.tooBig(len(b)) { // the WebSocket's own limit stops these first
			c.o.Logger.Warn("neuro: bad incoming message", "err", &ProtocolError{Reason: ErrMessageTooBig.Error()})
			continue
		}
		v, perr := parseIncoming(b)
		switch v.(type) {
		case *actionMsg, ReregisterAll:
			// Each of these queues a reply. If Neuro keeps sending them
			// but does not read, close the slow peer rather than queue
			// without bound.
			if n := c.unsentReplies(); n >= c.o.MaxQueue {
				return fmt.Errorf("neuro: %w: %d replies unsent; closing the connection", ErrQueueFull, n)
			}
		}
		if a, ok := v.(*actionMsg); ok {
			c.handleAction(gen, a, perr)
			continue
		}
		if perr != nil {
			c.o.Logger.Warn("neuro: bad incoming message", "err", perr)
			continue
		}
		c.handleEvent(v, n == 0)
	}
}

// handleEvent records an event and reacts to it; first says whether it was
// the first message of the connection.
func (c *Client) handleEvent(v any, first bool) {
	c.mu.Lock()
	defer c.unlockRecording()
	switch ev := v.(type) {
	case nil:
		return // unknown command: ignored, as the API does
	case ReregisterAll:
		c.reregisterLocked(first)
	case ShutdownGraceful:
		c.shutdownW = ev.WantsShutdown
	}
	if ev, ok := v.(Event); ok {
		c.emitLocked(ev, nil)
	}
}

// reregisterLocked answers actions/reregister_all with the whole set,
// unless the request cannot be about what this connection sent: startup
// and the whole set are queued first on every connect, so a request that
// is the first message of the connection was sent before the server read
// them (Randy sends one on every connection, which crosses them on the
// wire), and one that arrives while a whole-set registration is still
// unsent is answered by it. Answering those would register everything
// twice (Randy keeps both copies; a conformance tool reports
// perf/register/identical_duplicate). Any other request is answered. c.mu
// must be held.
func (c *Client) reregisterLocked(first bool) {
	es := c.reg.all()
	switch {
	case len(es) == 0:
		return
	case first:
		c.noteLocked(jsonl.In, "not answered: reregister_all crossed the registration sent on connect", nil)
		return
	case slices.ContainsFunc(c.queue, func(q queued) bool { return q.full }):
		c.noteLocked(jsonl.In, "not answered: reregister_all arrived before the queued registration of every action was sent", nil)
		return
	}
	c.pushLocked(queued{cmd: cmdRegister, b: c.mustEncode(cmdRegister, registerData{Actions: wireActions(es)}), full: true}, false)
}

// unsentReplies counts the queued messages not bounded by
// [Options.MaxQueue] at send time: results and registrations.
func (c *Client) unsentReplies() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.queue {
		if q.cmd == cmdResult || q.cmd == cmdRegister || q.cmd == cmdUnregister {
			n++
		}
	}
	return n
}

// pendingLocked reports whether an action of the current connection awaits
// its result. c.mu must be held.
func (c *Client) pendingLocked() bool {
	for _, cl := range c.inflight {
		if cl.gen == c.gen {
			return true
		}
	}
	return false
}
