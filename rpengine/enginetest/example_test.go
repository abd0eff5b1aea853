package enginetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// A game's test: serve the game on an ephemeral loopback port, let the
// fake engine connect as the RPEngine page would, and ask for a reply.
// Without a Responder the engine echoes the event text.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	server, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go server.Serve(l)
	defer server.Close()

	engine, err := enginetest.Dial(ctx, "ws://"+l.Addr().String()+rpengine.SocketPath, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close() // runs before server.Close
	if _, err := server.WaitSession(ctx); err != nil {
		log.Fatal(err)
	}

	doc, err := os.ReadFile("../../testdata/cards/minimal.json")
	if err != nil {
		log.Fatal(err)
	}
	ari, err := card.Parse(doc)
	if err != nil {
		log.Fatal(err)
	}
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{
		IntegrationID: "my-game", CharacterID: "ari", Card: ari, Text: "Where is the inn?",
	})
	if err != nil {
		log.Fatal(err)
	}
	result, err := reply.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Text)
	hash, _ := engine.CardHash("my-game", "ari")
	fmt.Println("engine has the card:", hash == result.CardHash.String())
	// Output:
	// I hear you. You said: Where is the inn?
	// engine has the card: true
}

// The same test in memory: the server serves a Listener and the engine
// dials it through the Listener's client, so no port is opened, and the
// test may run inside a testing/synctest bubble, where the server's
// timeouts and the engine's delays take no real time.
func ExampleListener() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	server, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	l := enginetest.NewListener()
	go server.Serve(l)
	defer server.Close()

	engine, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	if _, err := server.WaitSession(ctx); err != nil {
		log.Fatal(err)
	}
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{
		IntegrationID: "my-game", CharacterID: "ari", Card: inlineCard("Ari"), Text: "Is anyone there?",
	})
	if err != nil {
		log.Fatal(err)
	}
	result, err := reply.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Text)
	fmt.Println("socket:", server.SocketURL() == l.URL)
	// Output:
	// I hear you. You said: Is anyone there?
	// socket: true
}

// A scripted Responder decides what the character says, per request. With
// the audio modality each sentence also arrives as one speech segment.
func ExampleOptions_responder() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server, l := serve()
	defer server.Close()

	engine, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{
		HTTPClient: l.Client(),
		Responder: func(r enginetest.Request) enginetest.Script {
			if strings.Contains(r.Text, "sword") {
				return enginetest.Script{Sentences: []string{"Fifty gold.", "No haggling."}}
			}
			return enginetest.Script{Sentences: []string{"We sell swords."}}
		},
		SecondsPerSentence: 0.25,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	if _, err := server.WaitSession(ctx); err != nil {
		log.Fatal(err)
	}

	smith := inlineCard("Bram")
	for _, text := range []string{"Hello?", "How much is a sword?"} {
		reply, err := server.Reply(ctx, rpengine.ReplyRequest{
			IntegrationID: "my-game", CharacterID: "bram", Card: smith, Text: text,
			Voice: "M1",
		})
		if err != nil {
			log.Fatal(err)
		}
		segments := 0
		for ev := range reply.Events() {
			if ev.Kind == rpengine.EventSegment {
				segments++
				fmt.Printf("  speech: %d samples at %d Hz\n", len(ev.Segment.Samples), ev.Segment.SampleRate)
			}
		}
		result, err := reply.Wait(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q -> %q (%d segments)\n", text, result.Text, segments)
	}
	// Output:
	//   speech: 11025 samples at 44100 Hz
	// "Hello?" -> "We sell swords." (1 segments)
	//   speech: 11025 samples at 44100 Hz
	//   speech: 11025 samples at 44100 Hz
	// "How much is a sword?" -> "Fifty gold. No haggling." (2 segments)
}

// Fault knobs show the game what a real engine does to it. A forced
// card_resync_required is handled by the server (it resends a snapshot,
// invisible to the game); an error code reaches the game as a
// *rpengine.RequestError.
func ExampleFaults() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server, l := serve()
	defer server.Close()

	engine, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	if _, err := server.WaitSession(ctx); err != nil {
		log.Fatal(err)
	}
	ari := inlineCard("Ari")
	ask := func(text string) error {
		reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: ari, Text: text})
		if err != nil {
			return err
		}
		_, err = reply.Wait(ctx)
		return err
	}

	// The first request sends the card as a snapshot, the second only a
	// reference to it, which the engine refuses once: the server retries
	// with a snapshot.
	if err := ask("one"); err != nil {
		log.Fatal(err)
	}
	engine.SetFaults(enginetest.Faults{ForceResync: 1})
	fmt.Println("after a forced resync:", ask("two"))
	fmt.Println("card modes sent:", cardModes(engine))

	// Every request now fails with prompt_too_large.
	engine.SetFaults(enginetest.Faults{ErrorCode: "prompt_too_large"})
	err = ask("three")
	var re *rpengine.RequestError
	if errors.As(err, &re) {
		fmt.Println("code:", re.Code, "retryable:", re.Retryable)
	}
	fmt.Println("is ErrPromptTooLarge:", errors.Is(err, rpengine.ErrPromptTooLarge))
	// Output:
	// after a forced resync: <nil>
	// card modes sent: [snapshot reference snapshot]
	// code: prompt_too_large retryable: false
	// is ErrPromptTooLarge: true
}

// serve starts a game server on an in-memory listener and returns both:
// dial l.URL with l.Client().
func serve() (*rpengine.Server, *enginetest.Listener) {
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	l := enginetest.NewListener()
	go server.Serve(l)
	return server, l
}

// inlineCard is a minimal valid Character Card V2.
func inlineCard(name string) *card.Card {
	c, err := card.Parse([]byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{` +
		`"name":"` + name + `","description":"A character.","personality":"","scenario":"",` +
		`"first_mes":"","mes_example":"","creator_notes":"","system_prompt":"",` +
		`"post_history_instructions":"","alternate_greetings":[],"tags":[],` +
		`"creator":"","character_version":"","extensions":{}}}`))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// cardModes lists how each reply.request carried its card, as the engine
// received them.
func cardModes(engine *enginetest.Engine) []string {
	var modes []string
	for _, m := range engine.Received() {
		if m.Type != "reply.request" {
			continue
		}
		var v struct {
			Card struct {
				Mode string `json:"mode"`
			} `json:"card"`
		}
		if err := json.Unmarshal(m.Raw, &v); err != nil {
			log.Fatal(err)
		}
		modes = append(modes, v.Card.Mode)
	}
	return modes
}
