package jsonl

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkQueue_Record measures what recording costs the caller (a
// connection's reader): one reply.audio.chunk-shaped message of 11, 44 and
// 176 KB of base64 (a chunk is at most 44 KB). The Queue is not started,
// so that its goroutine's work (issue #36: it encodes the lines) is left
// out, and what it queued is thrown away every 256 records.
func BenchmarkQueue_Record(b *testing.B) {
	for _, n := range []int{11 << 10, 44 << 10, 176 << 10} {
		msg := chunk(n)
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

// chunk is a reply.audio.chunk-shaped message with n bytes of base64.
func chunk(n int) []byte {
	return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m1","sessionId":"s1","timestamp":"2026-12-02T03:04:05.678Z","requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"` +
		strings.Repeat("QUJD", n/4) + `"}`)
}

// BenchmarkQueue_encode measures the Queue goroutine's work for one line
// of a chunk of 11, 44 and 176 KB: encoding/json's check and compaction
// (Record), against a message known valid (RecordChecked, or one the
// Queue's valid accepts, issue #36), written as it is.
func BenchmarkQueue_encode(b *testing.B) {
	for _, checked := range []bool{false, true} {
		for _, n := range []int{11 << 10, 44 << 10, 176 << 10} {
			r := record{t: time.Now(), dir: In, msg: chunk(n), checked: checked}
			b.Run(fmt.Sprintf("checked=%t/%dKB", checked, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(r.msg)))
				b.ReportAllocs()
				var buf []byte
				for b.Loop() {
					var err error
					if buf, err = encode(buf[:0], r, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
