package stream

import (
	"encoding/base64"
	"fmt"
	"testing"
	"unsafe"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// TestAssembler_decodesInPlace checks that the data of every in-order
// chunk pushed as message text, the first of its segment included, is
// decoded where its samples go: the decoder's output is the segment's
// memory, and no copy follows (issue #24).
func TestAssembler_decodesInPlace(t *testing.T) {
	t.Parallel()
	if !wire.DecodesData() || !nativeLittleEndian {
		t.Skip("the data is decoded while the message is scanned only with AVX2, in place only on little-endian machines")
	}
	a, err := NewAssembler(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Push([]byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.start","messageId":"s",` +
		`"timestamp":"t","requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1}`)); err != nil {
		t.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(make([]byte, 4096))
	for seg := range 3 {
		for pos := range 4 {
			msg := fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m-%d-%d",`+
				`"timestamp":"t","requestId":"r1","sequence":%d,"segmentSequence":%d,"segmentChunkSequence":%d,"segmentChunkCount":4,"data":"%s"}`,
				seg, pos, 4*seg+pos, seg, pos, data)
			var before []int16
			if s := a.aud.segs[seg]; s != nil {
				before = s.samples
			}
			if err := a.Push(msg); err != nil {
				t.Fatal(err)
			}
			pcm := a.chunks.PCM()
			if pos == 3 {
				out, ok := a.Next()
				if !ok || out.Kind != OutputSegment {
					t.Fatalf("segment %d not emitted", seg)
				}
				before = out.Segment.Samples[:3*2048]
			} else if pos == 0 {
				before = a.aud.segs[seg].samples[:0]
			}
			if len(pcm) != 4096 || unsafe.Pointer(&pcm[0]) != unsafe.Pointer(unsafe.SliceData(before[len(before):cap(before)])) {
				t.Fatalf("segment %d chunk %d was not decoded where its samples go", seg, pos)
			}
		}
	}
}
