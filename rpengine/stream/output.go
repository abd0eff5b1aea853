package stream

import (
	"strconv"
	"time"
)

// OutputKind says which field of an [Output] is set.
type OutputKind int

// Output kinds.
const (
	OutputText     OutputKind = iota + 1 // Output.Text: the display text grew or changed
	OutputSegment                        // Output.Segment: a whole sentence of audio
	OutputAudioEnd                       // the audio is complete: no OutputSegment follows
	OutputAnomaly                        // Output.Anomaly: a stream inconsistency, reported and survived
	OutputEnd                            // Output.End: the reply ended; nothing follows
)

// Output is one result of an [Assembler], popped with [Assembler.Next].
// Exactly the field named by Kind is meaningful.
type Output struct {
	Kind    OutputKind
	Text    string  // OutputText: the whole display text so far
	Segment Segment // OutputSegment
	Anomaly Anomaly // OutputAnomaly
	End     End     // OutputEnd
}

// Segment is the audio of one sentence (one segmentSequence), emitted once
// all its chunks arrived and every earlier segment was emitted or skipped.
type Segment struct {
	Index      int           // segmentSequence
	SampleRate int           // Hz, as declared by reply.audio.start (never reinterpreted)
	Samples    []int16       // mono PCM; owned by the caller once returned
	Offset     time.Duration // start of the segment within the reply's emitted audio
	Duration   time.Duration // len(Samples) at SampleRate
}

// EndState is how a reply ended.
type EndState int

// End states.
const (
	EndCompleted EndState = iota + 1 // reply.completed
	EndCancelled                     // reply.cancelled
	EndFailed                        // request.error, or a bound of [Options] was exceeded
)

// End is the last output of a reply.
type End struct {
	State     EndState
	Reason    string // EndCancelled: reply.cancelled reason
	Code      string // EndFailed: request.error code, or a local Code* constant for a bound violation
	Message   string // EndFailed: human-readable explanation
	Retryable bool   // EndFailed: request.error retryable
	Final     *Final // when reply.text.completed arrived
	// SpeechElapsed is the engine's time to synthesize the speech
	// (elapsedMs of reply.audio.completed); zero before it arrived.
	SpeechElapsed time.Duration
}

// Final is what reply.text.completed says of a reply: its final text and
// what its response-processing rules extracted.
type Final struct {
	Text       string
	TokenCount int           // the reply's length in the model's tokens
	Elapsed    time.Duration // the engine's time to produce the text
	// Extracted maps each rule's id to what it captured.
	Extracted map[string][]string
}

// String returns the kind's name.
func (k OutputKind) String() string {
	switch k {
	case OutputText:
		return "text"
	case OutputSegment:
		return "segment"
	case OutputAudioEnd:
		return "audio_end"
	case OutputAnomaly:
		return "anomaly"
	case OutputEnd:
		return "end"
	}
	return "OutputKind(" + strconv.Itoa(int(k)) + ")"
}

// String returns the state's name.
func (s EndState) String() string {
	switch s {
	case EndCompleted:
		return "completed"
	case EndCancelled:
		return "cancelled"
	case EndFailed:
		return "failed"
	}
	return "EndState(" + strconv.Itoa(int(s)) + ")"
}
