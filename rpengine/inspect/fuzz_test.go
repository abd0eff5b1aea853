package inspect

import (
	"encoding/json"
	"testing"
)

// FuzzInspector_Write feeds recorder lines whose messages come from
// anywhere (the engine's are untrusted): Write never panics, what is kept
// stays within its bounds and its byte count, and the snapshot a page
// gets still encodes.
func FuzzInspector_Write(f *testing.F) {
	for _, l := range []string{
		`{"t":"2026-12-02T03:04:05.000Z","dir":"out","msg":{"type":"reply.request","messageId":"m1","requestId":"r1","integrationId":"g","characterId":"c","event":{"text":"hi","audio":{"sampleRate":16000,"data":"AAAA"}},"output":{"modalities":["text","audio"],"audio":{"voice":"F1"}},"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":{"data":{"name":"Ari"}},"targetHash":"ab"},"promptScene":{"kind":"k","priority":1}}}`,
		`{"t":"2026-12-02T03:04:05.001Z","dir":"in","msg":{"type":"reply.audio.chunk","requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":2,"data":"AAAAAA=="}}`,
		`{"t":"2026-12-02T03:04:05.002Z","dir":"in","msg":{"type":"reply.audio.chunk","requestId":"r1","segmentSequence":0,"segmentChunkSequence":1,"segmentChunkCount":2,"data":"AAA="}}`,
		`{"t":"2026-12-02T03:04:05.003Z","dir":"in","msg":{"type":"reply.audio.segment","requestId":"r1","segmentSequence":1,"slotIndex":3,"path":"audio/slot_0003.wav","byteLength":46}}`,
		`{"t":"2026-12-02T03:04:05.004Z","dir":"in","msg":{"type":"reply.text.delta","requestId":"r1","sequence":0,"delta":"Hel"}}`,
		`{"t":"2026-12-02T03:04:05.005Z","dir":"in","msg":{"type":"request.error","requestId":null,"code":"invalid_payload"}}`,
		`{"t":"2026-12-02T03:04:05.006Z","dir":"game","note":"reply.waiting","msg":{"requestId":"r1","reason":"capacity"}}`,
		`{"t":"x","dir":"","note":"recorder: 3 lines dropped"}`,
		`{"t":"2026-12-02T03:04:05.007Z","dir":"in","raw":"not json"}`,
		"not a line",
	} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in := New(&Options{MaxReplies: 3, MaxReplyBytes: 4096, MaxLogBytes: 2048})
		l := append(append([]byte(nil), line...), '\n') // the fuzzer's input is not ours to change
		for range 3 {                                   // the same line again: a duplicate, a second chunk
			_, _ = in.Write(l)
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		sum := 0
		for _, r := range in.replies {
			sum += r.bytes
		}
		if sum != in.replyBytes || in.replyBytes > 4096 || len(in.replies) > 3 || len(in.replies) != len(in.byID) {
			t.Fatalf("replies: %d of %d bytes counted, %d rows, %d ids", in.replyBytes, sum, len(in.replies), len(in.byID))
		}
		if in.log.bytes > 2048 && len(in.log.entries) > 0 {
			t.Fatalf("log holds %d bytes", in.log.bytes)
		}
		if _, err := json.Marshal(in.snapshotLocked()); err != nil {
			t.Fatal(err)
		}
	})
}
