package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// output owns the terminal: one goroutine (run) prints the Harness's
// events and, on request, the session's lines, so nothing interleaves.
type output struct {
	w      io.Writer
	events <-chan xty.Event
	jobs   chan job
	shown  string // text of the open streaming line; owned by run
}

// job is one thing for run to print after every event queued before it.
type job struct {
	text string
	done chan struct{}
}

func newOutput(w io.Writer, events <-chan xty.Event) *output {
	return &output{w: w, events: events, jobs: make(chan job)}
}

// run prints until events is closed.
func (o *output) run() {
	for {
		select {
		case ev, ok := <-o.events:
			if !ok {
				return
			}
			o.event(ev)
		case j := <-o.jobs:
			// A reply's stream events are queued before the call
			// returns, so they are all in the channel now: print them
			// first.
			o.drain()
			fmt.Fprint(o.w, j.text)
			close(j.done)
		}
	}
}

func (o *output) drain() {
	for {
		select {
		case ev, ok := <-o.events:
			if !ok {
				return
			}
			o.event(ev)
		default:
			return
		}
	}
}

// say prints text after every event queued so far. It must not be called
// once Events is closed.
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
	o.say(fmt.Sprintf("reply: %s\n", r.Text))
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
		fmt.Fprint(o.w, strings.TrimPrefix(ev.Text, o.shown))
		o.shown = ev.Text
	case xty.EventDone:
		o.endLine()
		if ev.Source == xty.SourceProactive {
			fmt.Fprintf(o.w, "companion (unprompted): %s\n", ev.Text)
		}
	case xty.EventCancel:
		o.endLine()
		fmt.Fprintln(o.w, "[interrupted]")
	case xty.EventError:
		if ev.Err != nil {
			fmt.Fprintf(o.w, "[error: %v]\n", ev.Err)
		} else {
			fmt.Fprintf(o.w, "[harness error: %s]\n", ev.Message)
		}
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
		fmt.Fprintf(o.w, "[%v; reconnecting]\n", ev.Err)
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
