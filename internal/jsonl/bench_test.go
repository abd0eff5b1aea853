package jsonl

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkQueue_Record measures what recording costs the caller (a
// connection's reader): one reply.audio.chunk-shaped message of 11, 44 and
// 176 KB of base64 (a chunk is at most 44 KB). The Queue is not started,
// so that its goroutine's work (issue #36: it encodes the lines) is left
// out, and what it queued is thrown away every 256 records.
func BenchmarkQueue_Record(b *testing.B) {
	for _, n := range []int{11 << 10, 44 << 10, 176 << 10} {
		msg := []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m1","sessionId":"s1","timestamp":"2026-12-02T03:04:05.678Z","requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"` +
			strings.Repeat("QUJD", n/4) + `"}`)
		b.Run(strconv.Itoa(n>>10)+"KB", func(b *testing.B) {
			q := NewQueue(io.Discard, 1<<40)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = q.Record(In, msg)
				if i%256 == 255 {
					b.StopTimer()
					q.lines, q.bytes = nil, 0
					b.StartTimer()
				}
			}
		})
	}
}
