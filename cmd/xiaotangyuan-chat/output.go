package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// frame is how often run polls the client for events, as a game loop
// does once per frame.
const frame = 50 * time.Millisecond

// output owns the terminal: one goroutine (run) prints the Harness's
// events and, on request, the session's lines, so nothing interleaves.
// It polls the client's events (Client.Poll), as a game's main loop would.
type output struct {
	w     io.Writer
	poll  func([]xty.Event) []xty.Event
	jobs  chan job
	stop  chan struct{}
	buf   []xty.Event // owned by run
	shown string      // text of the open streaming line; owned by run
}

// job is one thing for run to print after every event queued before it.
type job struct {
	text string
	done chan struct{}
}

// newOutput returns an output printing the events poll returns (the
// client's Poll).
func newOutput(w io.Writer, poll func([]xty.Event) []xty.Event) *output {
	return &output{w: w, poll: poll, jobs: make(chan job), stop: make(chan struct{})}
}

// run prints until close, polling every frame.
func (o *output) run() {
	t := time.NewTicker(frame)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			o.drain()
		case j := <-o.jobs:
			// A reply's stream events are queued before the call
			// returns, so they are all waiting now: print them first.
			o.drain()
			fmt.Fprint(o.w, j.text)
			close(j.done)
		case <-o.stop:
			o.drain()
			return
		}
	}
}

// close makes run print what is left and return.
func (o *output) close() { close(o.stop) }

func (o *output) drain() {
	o.buf = o.poll(o.buf[:0])
	for _, ev := range o.buf {
		o.event(ev)
	}
	clear(o.buf)
}

// say prints text after every event queued so far. It must not be called
// after close.
func (o *output) say(text string) {
	j := job{text: text, done: make(chan struct{})}
	o.jobs <- j
	<-j.done
}

// reply prints a chat's final reply, unless a barge-in cancelled it: the
// stream was cut at "[interrupted]", and the player is talking.
func (o *output) reply(r xty.Reply) {
	if r.Cancelled {
		o.say("")
		return
	}
	o.say(fmt.Sprintf("reply: %s\n", peertext.Text(r.Text)))
}

func (o *output) event(ev xty.Event) {
	switch ev.Kind {
	case xty.EventText:
		// Text replaces what is shown: print the new tail, or start a new
		// line when the model began a new step.
		if ev.StepReset || !strings.HasPrefix(ev.Text, o.shown) {
			fmt.Fprint(o.w, "\n… ")
			o.shown = ""
		}
		fmt.Fprint(o.w, peertext.Text(strings.TrimPrefix(ev.Text, o.shown))) // escaped (issue #16)
		o.shown = ev.Text
	case xty.EventDone:
		o.endLine()
		if ev.Source == xty.SourceProactive {
			fmt.Fprintf(o.w, "companion (unprompted): %s\n", peertext.Text(ev.Text))
		}
	case xty.EventCancel:
		o.endLine()
		fmt.Fprintln(o.w, "[interrupted]")
	case xty.EventError:
		fmt.Fprintf(o.w, "[harness error: %s]\n", peertext.Clip(ev.Message, peertext.LineBytes))
	case xty.EventDisconnected:
		var de *xty.DisconnectError
		switch {
		case errors.Is(ev.Err, net.ErrClosed):
			return // our own Close
		case errors.As(ev.Err, &de) && de.Reason == "save switched":
			fmt.Fprintln(o.w, "[reconnecting with the new save]")
			return
		}
		o.endLine()
		fmt.Fprintf(o.w, "[%s; reconnecting]\n", peertext.Clip(fmt.Sprint(ev.Err), peertext.LineBytes))
	case xty.EventConnected:
		fmt.Fprintln(o.w, "[connected]")
	}
}

// endLine ends an open streaming line.
func (o *output) endLine() {
	if o.shown != "" {
		fmt.Fprintln(o.w)
	}
	o.shown = ""
}
