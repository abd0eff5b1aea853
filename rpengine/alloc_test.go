package rpengine

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
)

// discardTransport is an engine that reads everything and says nothing:
// it records what is not an ack, without allocating for acks.
type discardTransport struct{ fakeTransport }

func (d *discardTransport) Send(b []byte) error {
	if bytes.Contains(b, []byte(`"type":"ack"`)) {
		return nil
	}
	return d.fakeTransport.Send(b)
}

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
	dt := &discardTransport{}
	sess := attachUnit(t, srv, dt, "hello-1")
	crd, err := card.Parse([]byte(unitCard))
	testutil.Success(t, err)
	u := &unit{t: t, srv: srv, ft: &dt.fakeTransport, c: sess, card: crd}
	r := u.reply(context.Background())
	msg := func(typ string, n int, payload string) []byte {
		return fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":%q,"messageId":"6f1c2a4e-8d3b-4c5a-9e7f-%012d",`+
			`"sessionId":%q,"timestamp":"2026-07-14T00:00:00.000Z","requestId":"r1",%s}`, typ, n, sess.info.ID, payload)
	}
	receive := func(b []byte) bool { return sess.Receive(session.Inbound{Msg: b, Text: true}) }
	testutil.Equal(t, "reply.audio.start handled", receive(msg("reply.audio.start", 0, `"format":"pcm_s16le","sampleRate":44100,"channels":1`)), true)
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
		if !receive(msgs[next]) {
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
	<-sess.w.Drained()
	testutil.Equal(t, "allocations per sentence", testing.AllocsPerRun(100, segment), 1.0)
	<-sess.w.Drained()
	inOrder := func() { // the chunks of a sentence but its first and last
		if next%perSeg == 0 || next%perSeg == perSeg-1 {
			segment()
		}
		push()
	}
	testutil.Equal(t, "allocations per in-order chunk", testing.AllocsPerRun(100, inOrder), 0.0)
}
