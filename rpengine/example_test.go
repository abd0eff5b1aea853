package rpengine_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"math"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
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

	ari, err := card.New(card.Data{Name: "Ari", Description: "A scout.", FirstMessage: "Halt! Who goes there?"})
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
	// Port 0: a free port, which Start has bound when it returns.
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if err := server.Start(); err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	engine, err := enginetest.Dial(ctx, server.SocketURL(), &enginetest.Options{
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

	ari, _ := card.New(card.Data{Name: "Ari", Description: "A scout."})
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

// Recorded speech goes into a request as the Recorder returns it. Here
// the "microphone" is a tone pushed into an audio.NewRecorder (a game
// whose engine captures the microphone does the same; OpenRecorder opens
// the sound card's), and enginetest plays the RPEngine page.
func Example_speech() {
	ctx := context.Background()
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if err := server.Start(); err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	engine, err := enginetest.Dial(ctx, server.SocketURL(), &enginetest.Options{
		Responder: func(r enginetest.Request) enginetest.Script {
			if r.HasAudio {
				return enginetest.Script{Sentences: []string{"I heard your voice."}}
			}
			return enginetest.DefaultScript(r)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()

	mic, err := audio.NewRecorder(&audio.RecorderOptions{SampleRate: 48000, Channels: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer mic.Close()
	if err := mic.Start(); err != nil { // push to talk: key down
		log.Fatal(err)
	}
	period := make([]float32, 2*480) // 10 ms of 48 kHz stereo
	for n := range 100 {             // one second of a 220 Hz tone
		for i := 0; i < 480; i++ {
			v := float32(0.3 * math.Sin(2*math.Pi*220*float64(n*480+i)/48000))
			period[2*i], period[2*i+1] = v, v
		}
		_ = mic.Push(period) // what the capture callback gives
	}
	speech, err := mic.Stop() // key up: 16 kHz mono, what RPEngine hears
	if err != nil {
		log.Fatal(err)
	}

	ari, _ := card.New(card.Data{Name: "Ari", Description: "A scout."})
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: ari,
		Speech: speech.Samples}) // or SpeechFloat: speech.Float32(), before its 16-bit conversion
	if err != nil {
		log.Fatal(err)
	}
	result, err := reply.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent %.1f s of speech; %s\n", speech.Duration().Seconds(), result.Text)
	// Output: sent 1.0 s of speech; I heard your voice.
}
