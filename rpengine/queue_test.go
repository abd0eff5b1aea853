package rpengine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// The slow-consumer policy of a Reply's queue (reply.go), event by event.

func textEvent(s string) session.Event { return session.Event{Kind: session.EventText, Text: s} }

func segmentEvent(i, rate, samples int) session.Event {
	return session.Event{Kind: session.EventSegment, Segment: stream.Segment{Index: i, SampleRate: rate, Samples: make([]int16, samples),
		Duration: time.Duration(samples) * time.Second / time.Duration(rate)}}
}

// drain takes every queued event, up to the end.
func drain(t *testing.T, r *Reply) []Event {
	t.Helper()
	var evs []Event
	for queued(r) > 0 {
		ev, err := r.Next(context.Background())
		testutil.Success(t, err)
		evs = append(evs, ev)
	}
	return evs
}

// Issue #31: text interleaved with segments coalesces (it replaced only a
// text event that was last, which with segments between never is), and
// segments do not count against the 1024 other events: 1600 words and
// 1600 segments of 10 ms (16 s) fit the default 60 s.
func TestReply_interleavedTextCoalesces(t *testing.T) {
	t.Parallel()
	r := newReply("r1", false, time.Minute)
	text := ""
	for i := range 1600 {
		text += fmt.Sprint(" w", i)
		if r.push(textEvent(text)) || r.push(segmentEvent(i, 44100, 441)) {
			t.Fatalf("slow consumer at %d: %v", i, r.err)
		}
	}
	evs := drain(t, r)
	testutil.Equal(t, "events", len(evs), 1601)
	testutil.Equal(t, "the latest text, first", evs[0], Event{Kind: EventText, Text: text})
	for i, ev := range evs[1:] {
		if ev.Kind != EventSegment || ev.Segment.Index != i {
			t.Fatalf("event %d: %+v", i+1, ev)
		}
	}
	// Consumed, the next text is queued anew, after what came before it.
	r.push(segmentEvent(1600, 44100, 441))
	r.push(textEvent(text + " end"))
	evs = drain(t, r)
	testutil.Equal(t, "kinds", []EventKind{evs[0].Kind, evs[1].Kind}, []EventKind{EventSegment, EventText})
}

// Capture levels coalesce with the latest capture status of the same
// stage, an anomaly between or not; a change of state never does.
func TestReply_captureCoalesces(t *testing.T) {
	t.Parallel()
	r := newReply("c1", true, time.Minute)
	level := func(state string, peak float64) session.Event {
		return session.Event{Kind: session.EventCapture, Capture: session.CaptureStatus{State: state, Peak: peak}}
	}
	r.push(level("listening", 0.1))
	r.push(session.Event{Kind: session.EventAnomaly})
	r.push(level("listening", 0.2))
	r.push(level("speech_started", 0.3))
	r.push(level("speech_started", 0.4))
	var got []string
	for _, ev := range drain(t, r) {
		got = append(got, fmt.Sprintf("%d %s %v", ev.Kind, ev.Capture.State, ev.Capture.Peak))
	}
	testutil.Equal(t, "events", got, []string{"4 listening 0.2", "5  0", "4 speech_started 0.4"})
}

// Every bound: the audio, the bytes (a higher declared rate, or segments
// with no samples, reach them before the audio), and the other events.
func TestReply_bounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   func(i int) session.Event
		kept int
	}{
		// 1 s: 44100 samples; 100 ms segments: 10 kept.
		{"audio", func(i int) session.Event { return segmentEvent(i, 44100, 4410) }, 10},
		// 384 kHz segments of 100 ms are 76,800 bytes: 1 s at 44.1 kHz and an
		// eighth is 99,225 bytes, one of them.
		{"bytes of a higher rate", func(i int) session.Event { return segmentEvent(i, 384000, 38400) }, 1},
		// Empty segments: 256 bytes each.
		{"empty segments", func(i int) session.Event { return segmentEvent(i, 44100, 0) }, 99225 / 256},
		{"other events", func(int) session.Event { return session.Event{Kind: session.EventAnomaly} }, maxQueuedEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReply("r1", false, time.Second)
			n := 0
			for !r.push(tt.ev(n)) {
				n++
				if n > 1e6 {
					t.Fatal("unbounded")
				}
			}
			testutil.Equal(t, "kept", n, tt.kept)
			if _, err := r.Wait(context.Background()); !errors.Is(err, ErrSlowConsumer) {
				t.Fatalf("ended with %v", err)
			}
			evs := drain(t, r)
			testutil.Equal(t, "kept, then the end", len(evs), tt.kept+1+btoi(tt.ev(0).Kind == session.EventSegment))
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The queue's memory follows what is queued: a consumer always one event
// behind, over a long reply, keeps it small.
func TestReply_queueMemoryBounded(t *testing.T) {
	t.Parallel()
	r := newReply("r1", false, time.Minute)
	r.push(segmentEvent(0, 44100, 1))
	for i := 1; i < 100000; i++ {
		r.push(segmentEvent(i, 44100, 1))
		if _, err := r.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := cap(r.queue); c > 16 {
		t.Errorf("a queue of %d events has room for %d", len(r.queue)-r.head, c)
	}
	testutil.Equal(t, "counted", []int{r.others, r.bytes}, []int{0, 2 + segmentOverhead})
}

// A reply ended by the bound just as its speech ends still says the
// speech ended (issue #17: a speaker plays what it got and finishes).
func TestReply_boundAtAudioEnd(t *testing.T) {
	t.Parallel()
	r := newReply("r1", false, time.Minute)
	r.push(segmentEvent(0, 44100, 441))
	for range maxQueuedEvents {
		r.push(session.Event{Kind: session.EventAnomaly})
	}
	testutil.Equal(t, "slow", r.push(session.Event{Kind: session.EventAudioEnd}), true)
	evs := drain(t, r)
	testutil.Equal(t, "the end", []EventKind{evs[len(evs)-2].Kind, evs[len(evs)-1].Kind}, []EventKind{EventAudioEnd, EventEnd})
}
