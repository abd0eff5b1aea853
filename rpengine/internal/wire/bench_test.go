package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

var chunk = []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"0f8e2c1a-6a6e-4a57-9d7e-1f2b3c4d5e6f","sessionId":"s","timestamp":"2026-07-14T00:00:00.000Z","requestId":"r1","sequence":3,"segmentSequence":1,"segmentChunkSequence":0,"segmentChunkCount":2,"data":"` + strings.Repeat("QUJD", 10922) + `"}`)

// BenchmarkDecodeHeader decodes the envelope of a 43 KB audio chunk.
func BenchmarkDecodeHeader(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if _, err := DecodeHeader(chunk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeHeader_reference is the naive alternative measured in
// the same run: unmarshalling the whole message into a map.
func BenchmarkDecodeHeader_reference(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(chunk, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindow_Seen records UUID message ids in a full window of 2000,
// against the reference measured in the same run: the same window keyed
// by the ids themselves (what it did before issue #16).
func BenchmarkWindow_Seen(b *testing.B) {
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = NewID()
	}
	b.Run("digest", func(b *testing.B) {
		b.ReportAllocs()
		w := NewWindow(2000)
		i := 0
		for b.Loop() {
			w.Seen(ids[i%len(ids)])
			i++
		}
	})
	b.Run("reference_map_of_ids", func(b *testing.B) {
		b.ReportAllocs()
		seen, ring, next := make(map[string]struct{}, 2000), make([]string, 2000), 0
		i := 0
		for b.Loop() {
			id := ids[i%len(ids)]
			i++
			if _, ok := seen[id]; ok {
				continue
			}
			if old := ring[next]; old != "" {
				delete(seen, old)
			}
			ring[next] = id
			next = (next + 1) % len(ring)
			seen[id] = struct{}{}
		}
	})
}
