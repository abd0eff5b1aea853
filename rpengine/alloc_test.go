package rpengine

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// discardTransport is an engine that reads everything and says nothing.
type discardTransport struct{ fakeTransport }

func (*discardTransport) send([]byte) error { return nil }

// TestSession_chunkAllocs pins what the reader costs per
// reply.audio.chunk, from the message text to the samples the consumer
// pops, the ack written included: nothing for an in-order chunk, and one
// allocation per sentence, its samples, which the game keeps (issue #24:
// 38 allocations a chunk on the game's side, 15 of them reading, 17 the
// ack).
func TestSession_chunkAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	srv, err := NewServer(&ServerOptions{Logger: slog.New(slog.DiscardHandler), IdleTimeout: time.Hour, MaxPendingAudio: time.Hour})
	testutil.Success(t, err)
	defer srv.Close()
	srv.mu.Lock()
	srv.handshake++
	srv.mu.Unlock()
	sess, err := srv.attach(&discardTransport{}, "hello-1", "test")
	testutil.Success(t, err)
	r := &Reply{sess: sess, id: "r1", asm: newAssembler(), maxAudio: time.Hour, done: make(chan struct{}),
		notify: make(chan struct{}, 1), decided: make(chan struct{})}
	testutil.Success(t, sess.addReply(r))
	msg := func(typ string, n int, payload string) []byte {
		return fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":%q,"messageId":"6f1c2a4e-8d3b-4c5a-9e7f-%012d",`+
			`"sessionId":%q,"timestamp":"2026-07-14T00:00:00.000Z","requestId":"r1",%s}`, typ, n, sess.info.ID, payload)
	}
	testutil.Equal(t, "reply.audio.start handled", sess.receiveText(msg("reply.audio.start", 0, `"format":"pcm_s16le","sampleRate":44100,"channels":1`)), true)
	const perSeg = 4
	data := base64.StdEncoding.EncodeToString(make([]byte, 8192))
	msgs := make([][]byte, 300*perSeg)
	for i := range msgs {
		msgs[i] = msg("reply.audio.chunk", i+1, fmt.Sprintf(`"sequence":%d,"segmentSequence":%d,"segmentChunkSequence":%d,"segmentChunkCount":%d,"data":"%s"`,
			i, i/perSeg, i%perSeg, perSeg, data))
	}
	ctx := context.Background()
	next := 0
	push := func() {
		if !sess.receiveText(msgs[next]) {
			t.Fatal("refused")
		}
		next++
		runtime.Gosched() // AllocsPerRun runs on one P: let the writer take the ack and give its buffer back
	}
	segment := func() {
		for range perSeg {
			push()
		}
		for {
			ev, err := r.Next(ctx)
			if err != nil || ev.Kind == EventEnd {
				t.Fatalf("reply ended: %v %v", err, ev.Err)
			}
			if ev.Kind == EventSegment {
				return
			}
		}
	}
	for range 10 { // the reader's, writer's and assembler's buffers reach their size
		segment()
	}
	<-sess.w.drained()
	testutil.Equal(t, "allocations per sentence", testing.AllocsPerRun(100, segment), 1.0)
	<-sess.w.drained()
	inOrder := func() { // the chunks of a sentence but its first and last
		if next%perSeg == 0 || next%perSeg == perSeg-1 {
			segment()
		}
		push()
	}
	testutil.Equal(t, "allocations per in-order chunk", testing.AllocsPerRun(100, inOrder), 0.0)
}
