package stream_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// The fuzz input is one event per line: a type name, a space, its JSON.
var fuzzTypes = map[string]func() wire.Event{
	"accepted":        func() wire.Event { return new(wire.Accepted) },
	"delta":           func() wire.Event { return new(wire.TextDelta) },
	"text.completed":  func() wire.Event { return new(wire.TextCompleted) },
	"audio.start":     func() wire.Event { return new(wire.AudioStart) },
	"chunk":           func() wire.Event { return new(wire.AudioChunk) },
	"audio.completed": func() wire.Event { return new(wire.AudioCompleted) },
	"completed":       func() wire.Event { return new(wire.Completed) },
	"cancelled":       func() wire.Event { return new(wire.Cancelled) },
	"error":           func() wire.Event { return new(wire.Failed) },
	"level":           func() wire.Event { return new(wire.CaptureLevel) },
}

func encodeEvents(tb testing.TB, evs []wire.Event) []byte {
	var buf bytes.Buffer
	for _, ev := range evs {
		name := "nil"
		for n, mk := range fuzzTypes {
			if ev != nil && reflect.TypeOf(mk()) == reflect.TypeOf(ev) && !reflect.ValueOf(ev).IsNil() {
				name = n
			}
		}
		buf.WriteString(name)
		if name != "nil" {
			b, err := json.Marshal(ev)
			if err != nil {
				tb.Fatal(err)
			}
			buf.WriteByte(' ')
			buf.Write(b)
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func decodeEvents(data []byte) []wire.Event {
	var evs []wire.Event
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		name, js, _ := bytes.Cut(line, []byte(" "))
		mk, ok := fuzzTypes[string(name)]
		if !ok {
			if string(name) == "nil" {
				evs = append(evs, nil)
			}
			continue
		}
		ev := mk()
		if json.Unmarshal(js, ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// FuzzAssembler pushes arbitrary event sequences: no panic, memory held
// and reserved within the bounds, segments in strictly increasing order with growing
// offsets, and one End, last. The same events pushed as message text give
// the same outputs (their chunks' data decoded into the segments as the
// messages are scanned).
func FuzzAssembler(f *testing.F) {
	for _, tt := range assemblerCases() {
		f.Add(encodeEvents(f, tt.events))
	}
	f.Add(encodeEvents(f, genReply(newRand(1))))
	// Two first chunks whose segments would each reserve most of the 50 ms
	// bound of the fuzz options: the second must not reserve beyond it.
	f.Add(encodeEvents(f, []wire.Event{start(), chunk(0, 0, 0, 4, make([]int16, 500)...), chunk(1, 1, 0, 4, make([]int16, 500)...)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &stream.Options{MaxHeldAudio: 50 * time.Millisecond, MaxHeldText: 4096, MaxText: 8192}
		a, raw := mustAssembler(opts), mustAssembler(opts)
		lastSeg, lastOffset, ended, final := -1, time.Duration(-1), false, false
		for _, ev := range decodeEvents(data) {
			a.PushEvent(ev)
			if err := raw.Push(messageOf(t, ev)); err != nil {
				t.Fatalf("message of %s: %v", describe(ev), err)
			}
			audio, maxAudio, text, pending := a.Held()
			if audio > maxAudio || text > opts.MaxHeldText || pending > 2048 {
				t.Fatalf("held audio %d/%d samples, text %d/%d bytes, %d outputs pending", audio, maxAudio, text, opts.MaxHeldText, pending)
			}
			if r := a.Reserved(); r < 0 || r > maxAudio {
				t.Fatalf("%d samples reserved ahead, bound %d", r, maxAudio)
			}
			if tc, ok := ev.(*wire.TextCompleted); ok && tc != nil {
				final = true // its text replaces the deltas unchecked (Options.MaxText)
			}
			if !final && len(a.Text()) > opts.MaxText+opts.MaxHeldText {
				t.Fatalf("text of %d bytes", len(a.Text()))
			}
			fromText := popAll(raw)
			for i := 0; ; i++ {
				o, ok := a.Next()
				if !ok {
					if i != len(fromText) {
						t.Fatalf("%d outputs from the message text, %d from the events", len(fromText), i)
					}
					break
				}
				if i >= len(fromText) || !reflect.DeepEqual(fromText[i], o) {
					t.Fatalf("output %d from the message text differs from %+v: %+v", i, o, fromText)
				}
				if ended {
					t.Fatalf("output %v after the End", o.Kind)
				}
				switch o.Kind {
				case stream.OutputSegment:
					s := o.Segment
					if s.Index <= lastSeg || s.Offset < lastOffset || s.SampleRate < 1 {
						t.Fatalf("segment %d at %v (rate %d) after segment %d at %v", s.Index, s.Offset, s.SampleRate, lastSeg, lastOffset)
					}
					lastSeg, lastOffset = s.Index, s.Offset
				case stream.OutputEnd:
					ended = true
				}
			}
			if a.Done() != ended {
				t.Fatalf("Done %v, End popped %v", a.Done(), ended)
			}
		}
	})
}
