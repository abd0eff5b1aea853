package stream_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

func TestCapture_Push(t *testing.T) {
	t.Parallel()
	var c stream.Capture
	_, ok := c.Level()
	testutil.Equal(t, "no level yet", ok, false)
	c.Push(&stream.CaptureLevel{RequestID: "c1", Seconds: 0.5, Peak: 0.4, RMS: 0.1})
	c.Push(&stream.CaptureState{RequestID: "c1", State: "listening", Seconds: 0.5, AutoEndEnabled: true})
	c.Push(&stream.CaptureLevel{RequestID: "c1", Seconds: 1, Peak: 0.8, RMS: 0.3})
	c.Push(&stream.CaptureState{RequestID: "c1", State: "speech_started", Seconds: 1})
	c.Push(&stream.CaptureLevel{RequestID: "other", Seconds: 9})
	c.Push(delta(0, "not a capture event"))
	c.Push(nil)
	c.Push((*stream.CaptureState)(nil))
	c.Push(&stream.CaptureTranscript{RequestID: "c1", Text: "hello", Language: "en", ElapsedMs: 80})

	l, ok := c.Level()
	testutil.Equal(t, "level", l, stream.CaptureLevel{RequestID: "c1", Seconds: 1, Peak: 0.8, RMS: 0.3})
	testutil.Equal(t, "level ok", ok, true)
	s, _ := c.State()
	testutil.Equal(t, "state", s, stream.CaptureState{RequestID: "c1", State: "speech_started", Seconds: 1})
	tr, ok := c.Transcript()
	testutil.Equal(t, "transcript", tr, stream.CaptureTranscript{RequestID: "c1", Text: "hello", Language: "en", ElapsedMs: 80})
	testutil.Equal(t, "transcript ok", ok, true)
	testutil.Equal(t, "ignored", c.Ignored(), 4)
}

// TestAssembler_Next_late checks outputs popped long after their push: a
// text output keeps the text of its time, also across the completed text
// replacing it.
func TestAssembler_Next_late(t *testing.T) {
	t.Parallel()
	a := stream.NewAssembler(nil)
	a.Push(start())
	a.Push(delta(0, "a"))
	a.Push(delta(1, "b"))
	a.Push(chunk(0, 0, 0, 1, 5))
	a.Push(delta(2, "c"))
	a.Push(textCompleted("ABC"))
	a.Push(completed())
	testutil.Equal(t, "Text", a.Text(), "ABC")
	testutil.Equal(t, "outputs", drain(a), []stream.Output{outText("ab"), outSeg(0, 44100, 0, 5), outText("abc"),
		outAnomaly(stream.AnomalyTextMismatch, 0), outText("ABC"), outAnomaly(stream.AnomalyMissingAudioCompleted, 0),
		outEnd(stream.End{State: stream.EndCompleted, Final: textCompleted("ABC")})})
}

func TestKinds_String(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ got, want string }{
		{stream.AnomalyWrongRequest.String(), "wrong_request"},
		{stream.AnomalyMissingAudioCompleted.String(), "missing_audio_completed"},
		{stream.AnomalyKind(0).String(), "AnomalyKind(0)"},
		{stream.AnomalyKind(99).String(), "AnomalyKind(99)"},
		{stream.OutputSegment.String(), "segment"},
		{stream.OutputKind(9).String(), "OutputKind(9)"},
		{stream.EndCancelled.String(), "cancelled"},
		{stream.EndState(0).String(), "EndState(0)"},
		{stream.Anomaly{Kind: stream.AnomalyOddChunk, Detail: "x"}.String(), "odd_chunk: x"},
	} {
		testutil.Equal(t, tt.want, tt.got, tt.want)
	}
	for k := stream.AnomalyWrongRequest; k <= stream.AnomalyMissingAudioCompleted; k++ {
		if s := k.String(); s == "" || s[0] == 'A' {
			t.Errorf("kind %d has no name", int(k))
		}
	}
}
