package rpengine_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// The integration a game writes: serve on the default port, then ask for
// replies and consume them at its own pace.
func Example_integration() {
	ctx := context.Background()
	server, err := rpengine.NewServer(nil) // 127.0.0.1:38471, production origins
	if err != nil {
		log.Fatal(err)
	}
	if err := server.Start(); err != nil { // the port is bound when it returns
		log.Fatal(err)
	}
	defer server.Close()
	fmt.Println("Open", server.URL(), "in RPEngine")

	ari, err := card.Parse([]byte(cardJSON))
	if err != nil {
		log.Fatal(err)
	}
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{
		IntegrationID: "my-game", CharacterID: "ari", Card: ari, Text: "Hello!",
		Voice: "F1", // spoken: EventSegment, then EventAudioEnd
	})
	if err != nil {
		log.Fatal(err)
	}
	for ev := range reply.Events() {
		switch ev.Kind {
		case rpengine.EventText:
			fmt.Println("subtitle:", ev.Text)
		case rpengine.EventSegment:
			fmt.Println("play", len(ev.Segment.Samples), "samples at", ev.Segment.SampleRate, "Hz")
		}
	}
	if _, err := reply.Wait(ctx); err != nil {
		log.Print(err)
	}
}

// A game's own test: enginetest plays the RPEngine page over loopback.
func Example_enginetest() {
	ctx := context.Background()
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go server.Serve(ln)
	defer server.Close()

	engine, err := enginetest.Dial(ctx, "ws://"+ln.Addr().String()+rpengine.SocketPath, &enginetest.Options{
		Responder: func(r enginetest.Request) enginetest.Script {
			return enginetest.Script{Sentences: []string{"Welcome, traveller.", "The road is long."}}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	if _, err := server.WaitSession(ctx); err != nil {
		log.Fatal(err)
	}

	ari, _ := card.Parse([]byte(cardJSON))
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: ari, Text: "Hi"})
	if err != nil {
		log.Fatal(err)
	}
	result, err := reply.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Text)
	// Output: Welcome, traveller. The road is long.
}
