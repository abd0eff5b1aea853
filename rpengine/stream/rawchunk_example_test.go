package stream_test

import (
	"fmt"

	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// A connection reader decodes reply.audio.chunk messages with a
// ChunkDecoder, without allocating, and everything else as before.
func ExampleChunkDecoder() {
	msg := []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk",` +
		`"messageId":"m-7","sessionId":"s-1","timestamp":"2026-07-14T00:00:00.000Z","requestId":"r1",` +
		`"sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"AQACAA=="}`)
	a := stream.NewAssembler(&stream.Options{RequestID: "r1"})
	a.Push(&stream.AudioStart{RequestID: "r1", Format: "pcm_s16le", SampleRate: 44100, Channels: 1})

	var d stream.ChunkDecoder // one per connection reader
	var c stream.AudioChunk
	env, err := d.Decode(&c, msg)
	if err != nil {
		fmt.Println(err) // errors.Is(err, stream.ErrNotAudioChunk): decode it the usual way
		return
	}
	fmt.Printf("ack %s\n", env.MessageID)
	a.Push(&c) // c.Data aliases msg: reuse msg only after Push
	for out, ok := a.Next(); ok; out, ok = a.Next() {
		if out.Kind == stream.OutputSegment {
			fmt.Println("segment", out.Segment.Index, out.Segment.Samples)
		}
	}
	// Output:
	// ack m-7
	// segment 0 [1 2]
}
