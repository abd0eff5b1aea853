// Command mygame is a game's first program, written from the README
// alone: it streams a character's reply, plays its speech through an
// audio.Mixer (what a game engine's audio player pulls; no sound device),
// and answers with recorded speech fed to an audio.NewRecorder with Push,
// all against the fake engine, rpengine/enginetest.
//
// scripts/check-module-recipe builds and runs it from a scratch module
// outside the repository, following the README's recipes for using the
// unpublished module. It lives here so that go vet and go build ./...
// compile it with the library: an API change that breaks it fails at once.
package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The game's server on a free port, and the fake engine dialled in.
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	if err := server.Start(); err != nil {
		return err
	}
	defer server.Close()
	eng, err := enginetest.Dial(ctx, server.SocketURL(), nil)
	if err != nil {
		return err
	}
	defer eng.Close()

	ari, err := card.New(card.Data{Name: "Ari", Description: "A scout who trusts no one.", FirstMessage: "Halt!"})
	if err != nil {
		return err
	}

	// The speech plays through a Mixer, pulled as an engine's audio player
	// pulls it: here four times faster than real time.
	mix, err := audio.NewMixer(nil) // 48 kHz stereo 16-bit
	if err != nil {
		return err
	}
	defer mix.Close()
	speaker, err := mix.NewSpeaker(nil)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	pulling := make(chan struct{})
	go func() {
		defer close(pulling)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		buf := make([]byte, 4*48000*40/1000) // 40 ms
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := mix.Read(buf); err != nil {
					return
				}
			}
		}
	}()
	defer func() { close(stop); <-pulling }()

	// say sends one event, shows the reply's text and plays its speech to
	// the end.
	say := func(req rpengine.ReplyRequest) error {
		req.IntegrationID, req.CharacterID, req.Card, req.Voice = "my-game", "ari", ari, "F1"
		reply, err := server.Reply(ctx, req)
		if err != nil {
			return err
		}
		text := ""
		for ev := range reply.Events() {
			switch ev.Kind {
			case rpengine.EventText:
				text = ev.Text
			case rpengine.EventSegment:
				err = speaker.Enqueue(reply.RequestID(), ev.Segment)
			case rpengine.EventAudioEnd:
				err = speaker.End(reply.RequestID())
			case rpengine.EventEnd:
				err = ev.Err
			}
			if err != nil {
				return err
			}
		}
		fmt.Println("Ari:", strings.TrimSpace(text))
		for !speaker.Position().Done {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		fmt.Printf("played %.1f s of speech\n", speaker.Position().Heard.Seconds())
		return nil
	}
	if err := say(rpengine.ReplyRequest{Text: "Hello!"}); err != nil {
		return err
	}

	// The player answers: the game's own microphone capture (here one
	// second of a 440 Hz tone) fed to a Recorder, 48 kHz stereo float32
	// frames, full scale 1.
	rec, err := audio.NewRecorder(&audio.RecorderOptions{SampleRate: 48000, Channels: 2})
	if err != nil {
		return err
	}
	defer rec.Close()
	if err := rec.Start(); err != nil { // push to talk: key down
		return err
	}
	frames := make([]float32, 2*480) // 10 ms
	for i := range 100 {
		for f := range 480 {
			v := float32(0.3 * math.Sin(2*math.Pi*440*float64(i*480+f)/48000))
			frames[2*f], frames[2*f+1] = v, v
		}
		if err := rec.Push(frames); err != nil {
			return err
		}
	}
	speech, err := rec.Stop() // key up
	if err != nil {
		return err
	}
	fmt.Printf("recorded %.1f s of speech\n", float64(len(speech.Samples))/16000) // 16 kHz mono
	return say(rpengine.ReplyRequest{Speech: speech.Samples})
}
