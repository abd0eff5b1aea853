package stream_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

var seedFlag = flag.Uint64("stream.seed", 0, "seed of TestAssembler_random (0: from the clock)")

// genReply generates a reply and its delivery: deltas and chunks permuted,
// with duplicates, conflicting duplicates and drops, then the closing
// messages. All numbers are valid; the disorder is in the delivery.
func genReply(rng *rand.Rand) []wire.Event {
	var body []wire.Event
	text := ""
	for i := range rng.IntN(8) {
		d := randWord(rng)
		text += d
		body = append(body, delta(i, d))
	}
	seq, nBytes, nSegs := 0, 0, rng.IntN(5)
	for s := range nSegs {
		count := 1 + rng.IntN(4)
		for c := range count {
			samples := make([]int16, 1+rng.IntN(6))
			for i := range samples {
				samples[i] = int16(rng.Uint32())
			}
			body = append(body, chunk(seq, s, c, count, samples...))
			seq++
			nBytes += 2 * len(samples)
		}
	}
	body = append(body, start())
	// Duplicates and conflicting duplicates.
	for range rng.IntN(4) {
		if len(body) == 0 {
			break
		}
		switch e := body[rng.IntN(len(body))].(type) {
		case *wire.TextDelta:
			body = append(body, e)
			if rng.IntN(2) == 0 {
				body = append(body, delta(e.Sequence, e.Delta+"!"))
			}
		case *wire.AudioChunk:
			body = append(body, e)
			if rng.IntN(2) == 0 {
				c := *e
				c.Data = pcm(int16(rng.Uint32()))
				if rng.IntN(2) == 0 {
					c.Data, c.Sequence = e.Data, e.Sequence+1000
				}
				body = append(body, &c)
			}
		default:
			body = append(body, e)
		}
	}
	final := text
	if rng.IntN(10) == 0 {
		final += "?"
	}
	closing := []wire.Event{textCompleted(final),
		&wire.AudioCompleted{RequestID: rid, ChunkCount: seq, TotalBytes: nBytes, SegmentCount: nSegs, DurationSeconds: float64(nBytes/2) / 44100}}
	if rng.IntN(5) == 0 {
		closing = append(closing, textCompleted(final+"x"))
	}
	body = permute(rng, body)
	for _, e := range closing {
		at := len(body)
		if rng.IntN(5) == 0 {
			at = rng.IntN(len(body) + 1)
		}
		body = append(body[:at], append([]wire.Event{e}, body[at:]...)...)
	}
	// Drops.
	kept := body[:0]
	for _, e := range body {
		if rng.IntN(20) != 0 {
			kept = append(kept, e)
		}
	}
	switch rng.IntN(10) {
	case 0:
		kept = append(kept, &wire.Cancelled{RequestID: rid, Reason: "requested_by_game"})
	case 1:
		kept = append(kept, &wire.Failed{RequestID: strp(rid), Code: "request_failed", Message: "boom"})
	default:
		kept = append(kept, completed())
	}
	return append(kept, delta(0, "late"))
}

// permute shuffles fully or only locally.
func permute(rng *rand.Rand, evs []wire.Event) []wire.Event {
	if rng.IntN(2) == 0 {
		rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		return evs
	}
	for i := 1; i < len(evs); i++ {
		if rng.IntN(4) == 0 {
			evs[i-1], evs[i] = evs[i], evs[i-1]
		}
	}
	return evs
}

func randWord(rng *rand.Rand) string {
	b := make([]byte, 1+rng.IntN(5))
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

func describe(ev wire.Event) string {
	switch e := ev.(type) {
	case *wire.Failed:
		return fmt.Sprintf("%T%+v", e, *e)
	}
	return fmt.Sprintf("%T%+v", ev, ev)
}

// TestAssembler_random checks the assembler against the reference on
// random replies delivered out of order, after every event. A second
// assembler takes the same replies as message text (Push), where chunk
// data is decoded into the segments' samples as the message is scanned
// (issue #24): its outputs are the same.
func TestAssembler_random(t *testing.T) {
	t.Parallel()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -stream.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := range 3000 {
		evs := genReply(rng)
		a, r, raw := mustAssembler(nil), newReference(), mustAssembler(nil)
		for i, ev := range evs {
			a.PushEvent(ev)
			testutil.Success(t, raw.Push(messageOf(t, ev)))
			outs, want := popAll(a), r.push(ev)
			if fromText := popAll(raw); !reflect.DeepEqual(fromText, outs) {
				t.Fatalf("seed %d reply %d event %d: outputs from the message text differ\n got %+v\nwant %+v", seed, iter, i, fromText, outs)
			}
			var got []stream.Output
			for _, o := range outs {
				got = append(got, normalize(o))
			}
			if len(got) != 0 || len(want) != 0 {
				if !equalOutputs(got, want) {
					for j, e := range evs[:i+1] {
						t.Logf("event %d: %s", j, describe(e))
					}
					t.Fatalf("seed %d reply %d event %d: outputs differ\n got %+v\nwant %+v", seed, iter, i, got, want)
				}
			}
			if a.Text() != r.shownText {
				t.Fatalf("seed %d reply %d event %d: Text %q, want %q", seed, iter, i, a.Text(), r.shownText)
			}
		}
		testutil.Equal(t, "Late", a.Stats().Late, r.late)
	}
}

func equalOutputs(got, want []stream.Output) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], normalize(want[i])) {
			return false
		}
	}
	return true
}
