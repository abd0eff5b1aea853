package stream_test

import (
	"encoding/base64"
	"fmt"

	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// message returns the text of an engine message of type typ whose own
// fields are the JSON fields given, as a connection delivers it.
func message(typ, fields string) []byte {
	return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"` + typ +
		`","messageId":"m-` + fmt.Sprint(len(fields)) + `","sessionId":"s1","timestamp":"2026-07-14T00:00:00.000Z",` + fields + `}`)
}

// Example assembles a reply whose messages arrive out of order: the second
// sentence's audio is complete first but waits for the first sentence.
func Example() {
	data := func(samples int) string { return base64.StdEncoding.EncodeToString(make([]byte, 2*samples)) }
	a, err := stream.NewAssembler(&stream.Options{RequestID: "r1"})
	if err != nil {
		panic(err)
	}
	messages := [][]byte{ // as read from the connection
		message("reply.audio.start", `"requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1`),
		message("reply.text.delta", `"requestId":"r1","sequence":1,"delta":"there."`),
		message("reply.text.delta", `"requestId":"r1","sequence":0,"delta":"Hello "`),
		message("reply.audio.chunk", `"requestId":"r1","sequence":2,"segmentSequence":1,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"`+data(4410)+`"`),
		message("reply.audio.chunk", `"requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":2,"data":"`+data(8820)+`"`),
		message("reply.audio.chunk", `"requestId":"r1","sequence":1,"segmentSequence":0,"segmentChunkSequence":1,"segmentChunkCount":2,"data":"`+data(4410)+`"`),
		message("reply.text.completed", `"requestId":"r1","text":"Hello there.","tokenCount":3,"elapsedMs":250`),
		message("reply.audio.completed", `"requestId":"r1","chunkCount":3,"totalBytes":35280,"segmentCount":2,"durationSeconds":0.4,"elapsedMs":400`),
		message("reply.completed", `"requestId":"r1","modalities":["text","audio"]`),
	}
	for _, msg := range messages {
		if err := a.Push(msg); err != nil {
			fmt.Println(err) // not a valid engine message: nothing changed
		}
		for out, ok := a.Next(); ok; out, ok = a.Next() {
			switch out.Kind {
			case stream.OutputText:
				fmt.Printf("text %q\n", out.Text)
			case stream.OutputSegment:
				s := out.Segment
				fmt.Printf("segment %d: %d samples at %d Hz, offset %v, duration %v\n", s.Index, len(s.Samples), s.SampleRate, s.Offset, s.Duration)
			case stream.OutputAudioEnd:
				fmt.Println("audio complete")
			case stream.OutputAnomaly:
				fmt.Println("anomaly", out.Anomaly)
			case stream.OutputEnd:
				fmt.Println("end", out.End.State, "final text:", out.End.Final.Text)
			}
		}
	}
	// Output:
	// text "Hello there."
	// segment 0: 13230 samples at 44100 Hz, offset 0s, duration 300ms
	// segment 1: 4410 samples at 44100 Hz, offset 300ms, duration 100ms
	// audio complete
	// end completed final text: Hello there.
}

// ExampleAssembler_Next_anomaly shows a reported inconsistency: the
// completed text differs from the deltas, and wins.
func ExampleAssembler_Next_anomaly() {
	a, _ := stream.NewAssembler(nil)
	_ = a.Push(message("reply.text.delta", `"requestId":"r1","sequence":0,"delta":"Hi"`))
	_ = a.Push(message("reply.text.completed", `"requestId":"r1","text":"Hi!","tokenCount":1,"elapsedMs":3`))
	_ = a.Push(message("reply.cancelled", `"requestId":"r1","reason":"requested_by_game"`))
	for out, ok := a.Next(); ok; out, ok = a.Next() {
		switch out.Kind {
		case stream.OutputText:
			fmt.Printf("text %q\n", out.Text)
		case stream.OutputAnomaly:
			fmt.Println("anomaly", out.Anomaly.Kind)
		case stream.OutputEnd:
			fmt.Println("end", out.End.State, out.End.Reason)
		}
	}
	// Output:
	// text "Hi"
	// anomaly text_mismatch
	// text "Hi!"
	// end cancelled requested_by_game
}
