package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// dialSim connects the library's fake RPEngine (rpengine/enginetest) to
// the game's server, as the RPEngine page would: over loopback WebSocket,
// or through the mailbox folder. Everything but the model is real; the
// scene says the replies are simulated, and they come from ch.
func dialSim(k *link, mailbox string, ch *character) (*enginetest.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := &enginetest.Options{
		ClientVersion:      "simulated engine",
		Responder:          func(r enginetest.Request) enginetest.Script { return simReply(ch, r) },
		SecondsPerSentence: 1.2,
	}
	var eng *enginetest.Engine
	var err error
	if mailbox != "" {
		eng, err = enginetest.DialMailbox(ctx, mailbox, opts, nil)
	} else {
		eng, err = enginetest.Dial(ctx, k.socketURL(), opts)
	}
	if err != nil {
		return nil, fmt.Errorf("the simulated engine could not connect: %w", err)
	}
	return eng, nil
}

// simReply is what the simulated engine answers as the loaded card's
// character (Issue #32: a --card run answered with Maren's line): it
// echoes the line, so nobody mistakes it for a model.
func simReply(ch *character, r enginetest.Request) enginetest.Script {
	said := strings.TrimSpace(r.Text)
	if r.HasAudio {
		said = "(your recorded voice; a simulation hears no words)"
	}
	return enginetest.Script{Sentences: []string{
		ch.card.Name() + " hears you.",
		"You said: " + said,
	}}
}
