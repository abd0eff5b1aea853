package stream_test

import (
	"encoding/base64"
	"fmt"

	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// Example assembles a reply whose messages arrive out of order: the second
// sentence's audio is complete first but waits for the first sentence.
func Example() {
	data := func(samples int) string { return base64.StdEncoding.EncodeToString(make([]byte, 2*samples)) }
	a := stream.NewAssembler(&stream.Options{RequestID: "r1"})
	events := []stream.Event{
		&stream.AudioStart{RequestID: "r1", Format: "pcm_s16le", SampleRate: 44100, Channels: 1},
		&stream.TextDelta{RequestID: "r1", Sequence: 1, Delta: "there."},
		&stream.TextDelta{RequestID: "r1", Sequence: 0, Delta: "Hello "},
		&stream.AudioChunk{RequestID: "r1", Sequence: 2, SegmentSequence: 1, SegmentChunkSequence: 0, SegmentChunkCount: 1, Data: data(4410)},
		&stream.AudioChunk{RequestID: "r1", Sequence: 0, SegmentSequence: 0, SegmentChunkSequence: 0, SegmentChunkCount: 2, Data: data(8820)},
		&stream.AudioChunk{RequestID: "r1", Sequence: 1, SegmentSequence: 0, SegmentChunkSequence: 1, SegmentChunkCount: 2, Data: data(4410)},
		&stream.TextCompleted{RequestID: "r1", Text: "Hello there."},
		&stream.AudioCompleted{RequestID: "r1", ChunkCount: 3, TotalBytes: 35280, SegmentCount: 2, DurationSeconds: 0.4},
		&stream.Completed{RequestID: "r1", Modalities: []string{"text", "audio"}},
	}
	for _, ev := range events {
		a.Push(ev)
		for out, ok := a.Next(); ok; out, ok = a.Next() {
			switch out.Kind {
			case stream.OutputText:
				fmt.Printf("text %q\n", out.Text)
			case stream.OutputSegment:
				s := out.Segment
				fmt.Printf("segment %d: %d samples at %d Hz, offset %v, duration %v\n", s.Index, len(s.Samples), s.SampleRate, s.Offset, s.Duration)
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
	// end completed final text: Hello there.
}

// ExampleAssembler_Next_anomaly shows a reported inconsistency: the
// completed text differs from the deltas, and wins.
func ExampleAssembler_Next_anomaly() {
	a := stream.NewAssembler(nil)
	a.Push(&stream.TextDelta{RequestID: "r1", Sequence: 0, Delta: "Hi"})
	a.Push(&stream.TextCompleted{RequestID: "r1", Text: "Hi!"})
	a.Push(&stream.Cancelled{RequestID: "r1", Reason: "requested_by_game"})
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

// ExampleCapture folds voice capture messages into their latest state.
func ExampleCapture() {
	var c stream.Capture
	c.Push(&stream.CaptureState{RequestID: "c1", State: "speech_started", Seconds: 0.8})
	c.Push(&stream.CaptureLevel{RequestID: "c1", Seconds: 1.2, Peak: 0.5, RMS: 0.25})
	c.Push(&stream.CaptureTranscript{RequestID: "c1", Text: "open the door", Language: "en"})
	s, _ := c.State()
	l, _ := c.Level()
	t, _ := c.Transcript()
	fmt.Println(s.State, l.RMS, t.Text)
	// Output: speech_started 0.25 open the door
}
