package rpengine

// Fuzz targets and reorder/duplicate tables for everything the engine can
// send (issue #9): the hello, every inbound message kind through a live
// session with a pending reply and a pending sync, and whole inbound
// sequences. Invariants: no panic; after the session ends, every pending
// request has ended and its event stream ends with EventEnd (nothing
// hangs); queued events stay bounded.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// inboundKinds are the engine -> game message types (spec sections 3, 6),
// plus one the server does not know.
var inboundKinds = []string{
	wire.TypeHello, wire.TypeAck, wire.TypeCapacity, wire.TypeCharacterSynced,
	wire.TypeReplyAccepted, wire.TypeTextDelta, wire.TypeTextCompleted,
	wire.TypeAudioStart, wire.TypeAudioChunk, wire.TypeAudioCompleted,
	wire.TypeReplyCompleted, wire.TypeReplyCancelled, wire.TypeRequestError,
	wire.TypeCaptureLevel, wire.TypeCaptureState, wire.TypeCaptureTranscript,
	"future.kind",
}

// fuzzUnit is a session with a pending audio reply "r1", a pending voice
// capture "c1" and a pending character sync; timers are off so that
// everything is synchronous.
type fuzzUnit struct {
	*unit
	r, capture *Reply
	syncMsg    string        // the sync's messageId
	synced     chan struct{} // closed once the SyncCharacter call returned
	syncHash   card.Digest
	syncErr    error
}

func newFuzzUnit(t *testing.T) *fuzzUnit {
	t.Helper()
	u := newUnit(t, &ServerOptions{AckTimeout: -1, IdleTimeout: -1, MaxPendingAudio: 2 * time.Second})
	ctx := context.Background()
	// Reply and Capture return at reply.accepted, which the scripts may
	// or may not deliver: they run on their own goroutines. The capture
	// is for another character, so that it does not wait for r1's
	// reply.accepted (issue #15).
	r := u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1",
		Voice: "F1"})
	c := u.capture(ctx, CaptureRequest{IntegrationID: "g", CharacterID: "c2", Card: u.card, RequestID: "c1", Transcript: true})
	fu := &fuzzUnit{unit: u, r: r, capture: c, synced: make(chan struct{})}
	go func() {
		defer close(fu.synced)
		fu.syncHash, fu.syncErr = u.srv.SyncCharacter(ctx, "g", "s", u.card)
	}()
	fu.syncMsg = u.ft.wait(t, "character.sync", 1)[0]["messageId"].(string)
	t.Cleanup(func() { <-fu.synced })
	return fu
}

// expand replaces placeholders of seed fields with the unit's ids.
func (u *fuzzUnit) expand(fields []byte) []byte {
	fields = bytes.ReplaceAll(fields, []byte("$MSG"), []byte(u.r.MessageID()))
	fields = bytes.ReplaceAll(fields, []byte("$SYNC"), []byte(u.syncMsg))
	return bytes.ReplaceAll(fields, []byte("$SID"), []byte(u.c.info.ID))
}

// envelope builds a message of type typ whose own fields are the JSON
// object members in fields (without braces).
func (u *fuzzUnit) envelope(typ, id string, fields []byte) []byte {
	b, _ := wire.Encode(typ, id, u.c.info.ID, time.Unix(0, 0), nil)
	if len(bytes.TrimSpace(fields)) == 0 {
		return b
	}
	b = b[:len(b)-1]
	b = append(b, ',')
	b = append(b, u.expand(fields)...)
	return append(b, '}')
}

// finish ends the session and checks that every request ended, that each
// event stream ends with EventEnd and that queues stayed bounded.
func (u *fuzzUnit) finish(t *testing.T) {
	t.Helper()
	u.end(ErrConnectionLost)
	for _, r := range []*Reply{u.r, u.capture} {
		select {
		case <-r.Done():
		default:
			t.Fatalf("reply %s still pending after the session ended", r.id)
		}
		r.mu.Lock()
		others, audio, held := r.others, r.audio, r.bytes
		r.mu.Unlock()
		if others > maxQueuedEvents+2 || audio > r.maxAudio || held > r.maxBytes {
			t.Fatalf("%d events, %v of audio, %d bytes queued", others, audio, held)
		}
		r.mu.Lock()
		delivered := r.took // the End was consumed already
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var last Event
		if delivered {
			last.Kind = EventEnd
		}
		for {
			ev, err := r.Next(ctx)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("events of %s: %v", r.id, err)
				}
				break
			}
			last = ev
		}
		cancel()
		if last.Kind != EventEnd {
			t.Fatalf("events of %s end with kind %d", r.id, last.Kind)
		}
	}
	<-u.synced // the session's end ends it
}

func pcmB64(samples int, v int16) string {
	b := make([]byte, 2*samples)
	for i := 0; i < samples; i++ {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// inboundSeeds are valid field sets for each kind, addressed to the
// unit's pending requests.
func inboundSeeds() map[string][]string {
	chunk := pcmB64(441, 1000)
	return map[string][]string{
		wire.TypeHello:           {`"clientVersion":"x"`},
		wire.TypeAck:             {`"acknowledgedMessageId":"$MSG"`, `"acknowledgedMessageId":"$MSG","duplicate":true`, `"acknowledgedMessageId":7`},
		wire.TypeCapacity:        {`"queueDepth":1,"queueLimit":20,"acceptingRequests":false`, `"queueDepth":-1,"queueLimit":1e300,"acceptingRequests":true`},
		wire.TypeCharacterSynced: {`"sourceMessageId":"$SYNC","integrationId":"g","characterId":"s","targetHash":"` + strings.Repeat("ab", 32) + `"`, `"sourceMessageId":"$SYNC","targetHash":"sha256-x"`},
		wire.TypeReplyAccepted:   {`"requestId":"r1","eventId":"e","resolvedCardHash":"` + strings.Repeat("0", 64) + `","queueDepth":1`, `"requestId":"r1","resolvedCardHash":null`},
		wire.TypeTextDelta:       {`"requestId":"r1","sequence":0,"delta":"Hel"`, `"requestId":"r1","sequence":1e9,"delta":"x"`, `"requestId":"r1","sequence":-1,"delta":""`},
		wire.TypeTextCompleted:   {`"requestId":"r1","text":"Hello.","tokenCount":2,"elapsedMs":1.5,"extractedContent":{"a":["b"]}`},
		wire.TypeAudioStart:      {`"requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1`, `"requestId":"r1","format":"pcm_f32le","sampleRate":0,"channels":2`},
		wire.TypeAudioChunk: {`"requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"` + chunk + `"`,
			`"requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":5,"segmentChunkCount":2,"data":"!!"`,
			`"requestId":"r1","sequence":3,"segmentSequence":99999999,"segmentChunkSequence":0,"segmentChunkCount":100000,"data":"AAAA"`},
		wire.TypeAudioCompleted:    {`"requestId":"r1","chunkCount":1,"totalBytes":882,"durationSeconds":0.01,"elapsedMs":3,"segmentCount":1`},
		wire.TypeReplyCompleted:    {`"requestId":"r1","modalities":["text","audio"]`, `"requestId":"c1","modalities":["text"]`},
		wire.TypeReplyCancelled:    {`"requestId":"r1","reason":"requested_by_game"`, `"requestId":"c1","reason":"connection_lost"`},
		wire.TypeRequestError:      {`"requestId":"r1","sourceMessageId":"x","code":"card_resync_required","message":"m","retryable":true`, `"requestId":null,"sourceMessageId":"$SYNC","code":"invalid_character_card","message":"m"`, `"code":"invalid_payload","message":"bad"`},
		wire.TypeCaptureLevel:      {`"requestId":"c1","seconds":0.1,"peak":0.5,"rms":0.2`},
		wire.TypeCaptureState:      {`"requestId":"c1","state":"speech_ended","seconds":1,"autoEndEnabled":true`},
		wire.TypeCaptureTranscript: {`"requestId":"c1","text":"Hi","language":"en","elapsedMs":3`},
		"future.kind":              {`"requestId":"r1"`},
	}
}

// FuzzInbound delivers one engine message of every kind (selected by
// kind) with arbitrary own fields to a session with pending requests.
func FuzzInbound(f *testing.F) {
	seeds := inboundSeeds()
	for i, k := range inboundKinds {
		for _, s := range seeds[k] {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, fields []byte) {
		u := newFuzzUnit(t)
		typ := inboundKinds[int(kind)%len(inboundKinds)]
		u.recv(u.envelope(typ, "m1", fields))
		// The same message twice is processed once; a new id again.
		u.recv(u.envelope(typ, "m1", fields))
		u.recv(u.envelope(typ, "m2", fields))
		u.finish(t)
	})
}

// FuzzInboundSequence delivers arbitrary whole messages, one per line,
// to a session with pending requests.
func FuzzInboundSequence(f *testing.F) {
	f.Add([]byte("not json\n{}\n[]\n" + rawEnvelope("ack", "a", `"acknowledgedMessageId":"x"`)))
	for _, seq := range [][]string{replyScript(), captureScript()} {
		lines := make([]string, len(seq))
		for i, m := range seq {
			lines[i] = m
		}
		f.Add([]byte(strings.Join(lines, "\n")))
		// Reversed.
		rev := make([]string, len(lines))
		for i := range lines {
			rev[i] = lines[len(lines)-1-i]
		}
		f.Add([]byte(strings.Join(rev, "\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u := newFuzzUnit(t)
		for i, line := range bytes.Split(data, []byte("\n")) {
			if i == 256 {
				break
			}
			u.recv(u.expand(line))
		}
		u.finish(t)
	})
}

func rawEnvelope(typ, id, fields string) string {
	s := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"` + typ + `","messageId":"` + id + `","sessionId":"$SID","timestamp":"t"`
	if fields != "" {
		s += "," + fields
	}
	return s + "}"
}

// replyScript is a complete text+audio reply to r1: two sentences, three
// chunks in two segments, with capacity updates and an ack.
func replyScript() []string {
	c1, c2, c3 := pcmB64(4410, 100), pcmB64(4410, 200), pcmB64(2205, 300)
	return []string{
		rawEnvelope("ack", "s0", `"acknowledgedMessageId":"$MSG"`),
		rawEnvelope("reply.accepted", "s1", `"requestId":"r1","eventId":"e","resolvedCardHash":"`+strings.Repeat("0", 64)+`","queueDepth":1`),
		rawEnvelope("capacity.update", "s2", `"queueDepth":1,"queueLimit":20,"acceptingRequests":true`),
		rawEnvelope("reply.text.delta", "s3", `"requestId":"r1","sequence":0,"delta":"Hi"`),
		rawEnvelope("reply.text.delta", "s4", `"requestId":"r1","sequence":1,"delta":" there."`),
		rawEnvelope("reply.audio.start", "s5", `"requestId":"r1","format":"pcm_s16le","sampleRate":44100,"channels":1`),
		rawEnvelope("reply.audio.chunk", "s6", `"requestId":"r1","sequence":0,"segmentSequence":0,"segmentChunkSequence":0,"segmentChunkCount":2,"data":"`+c1+`"`),
		rawEnvelope("reply.audio.chunk", "s7", `"requestId":"r1","sequence":1,"segmentSequence":0,"segmentChunkSequence":1,"segmentChunkCount":2,"data":"`+c2+`"`),
		rawEnvelope("reply.text.delta", "s8", `"requestId":"r1","sequence":2,"delta":" Bye."`),
		rawEnvelope("reply.audio.chunk", "s9", `"requestId":"r1","sequence":2,"segmentSequence":1,"segmentChunkSequence":0,"segmentChunkCount":1,"data":"`+c3+`"`),
		rawEnvelope("reply.text.completed", "s10", `"requestId":"r1","text":"Hi there. Bye.","tokenCount":3,"elapsedMs":5`),
		rawEnvelope("reply.audio.completed", "s11", `"requestId":"r1","chunkCount":3,"totalBytes":22050,"durationSeconds":0.25,"elapsedMs":5,"segmentCount":2`),
		rawEnvelope("reply.completed", "s12", `"requestId":"r1","modalities":["text","audio"]`),
		rawEnvelope("capacity.update", "s13", `"queueDepth":0,"queueLimit":20,"acceptingRequests":true`),
		rawEnvelope("character.synced", "s14", `"sourceMessageId":"$SYNC","integrationId":"g","characterId":"s","targetHash":"`+strings.Repeat("ab", 32)+`"`),
	}
}

// captureScript is a voice capture c1 and its text reply.
func captureScript() []string {
	return []string{
		rawEnvelope("voice.capture.state", "v0", `"requestId":"c1","state":"listening","seconds":0,"autoEndEnabled":true`),
		rawEnvelope("voice.capture.level", "v1", `"requestId":"c1","seconds":0.1,"peak":0.5,"rms":0.2`),
		rawEnvelope("voice.capture.state", "v2", `"requestId":"c1","state":"speech_started","seconds":0.1,"autoEndEnabled":true`),
		rawEnvelope("voice.capture.level", "v3", `"requestId":"c1","seconds":0.2,"peak":0.6,"rms":0.3`),
		rawEnvelope("voice.capture.state", "v4", `"requestId":"c1","state":"speech_ended","seconds":1,"autoEndEnabled":true`),
		rawEnvelope("voice.capture.transcript", "v5", `"requestId":"c1","text":"Hello","language":"en","elapsedMs":3`),
		rawEnvelope("reply.accepted", "v6", `"requestId":"c1","eventId":"e","resolvedCardHash":"`+strings.Repeat("0", 64)+`","queueDepth":1`),
		rawEnvelope("reply.text.delta", "v7", `"requestId":"c1","sequence":0,"delta":"Hello"`),
		rawEnvelope("reply.text.delta", "v8", `"requestId":"c1","sequence":1,"delta":" you."`),
		rawEnvelope("reply.text.completed", "v9", `"requestId":"c1","text":"Hello you.","tokenCount":2,"elapsedMs":5`),
		rawEnvelope("reply.completed", "v10", `"requestId":"c1","modalities":["text"]`),
	}
}

// outcome is what the game saw of one request.
type outcome struct {
	err      string
	text     string
	segments []int // samples per segment, in order
	states   []string
	synced   string
}

func (u *fuzzUnit) outcome(r *Reply) outcome {
	var o outcome
	now, cancel := context.WithCancel(context.Background())
	cancel() // Next returns what is queued, then ctx.Err or io.EOF
	for {
		ev, err := r.Next(now)
		if err != nil {
			break
		}
		switch ev.Kind {
		case EventSegment:
			o.segments = append(o.segments, len(ev.Segment.Samples))
		case EventCapture:
			if st := ev.Capture.State; len(o.states) == 0 || o.states[len(o.states)-1] != st {
				o.states = append(o.states, st)
			}
		}
	}
	select {
	case <-r.Done():
		res, err := r.Wait(context.Background())
		if err != nil {
			o.err = err.Error()
		} else {
			o.text = res.Text
		}
	default:
		o.err = "pending"
	}
	// The sync ended when the session no longer holds it; its call then
	// returns.
	pending := true
	_ = u.c.call(func(time.Time) { pending = len(u.c.syncs) > 0 })
	if !pending {
		<-u.synced
		o.synced = fmt.Sprint(u.syncHash, u.syncErr)
	}
	return o
}

// play delivers msgs and returns the outcomes of r1 and c1.
func play(t *testing.T, msgs []string) (outcome, outcome) {
	u := newFuzzUnit(t)
	for _, m := range msgs {
		u.recv(u.expand([]byte(m)))
	}
	a, b := u.outcome(u.r), u.outcome(u.capture)
	u.finish(t)
	return a, b
}

// endScript ends r1 with an error and c1 with a cancellation, with a
// second hello and a message type the server does not know.
func endScript() []string {
	return []string{
		rawEnvelope("reply.accepted", "x1", `"requestId":"r1","eventId":"e","resolvedCardHash":"`+strings.Repeat("0", 64)+`","queueDepth":1`),
		rawEnvelope("future.kind", "x2", `"requestId":"r1"`),
		rawEnvelope("request.error", "x3", `"requestId":"r1","sourceMessageId":"$MSG","code":"unsupported_voice","message":"no","retryable":false`),
		rawEnvelope("reply.cancelled", "x4", `"requestId":"c1","reason":"requested_by_game"`),
		rawEnvelope("hello", "x5", `"clientVersion":"again"`),
	}
}

// contentRepeatable are kinds without a sequence number that an engine
// may legitimately send again with the same content (a capture that
// restarts listening): a repeat under a new messageId is a new event.
var contentRepeatable = map[string]bool{wire.TypeCaptureState: true, wire.TypeCaptureTranscript: true}

// TestSession_duplicateEveryKind sends every message of each kind twice:
// with the same messageId (the engine's retransmission) and, for kinds
// that carry sequence numbers or end something, with a new one (a buggy
// engine). The game's view must not change.
func TestSession_duplicateEveryKind(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, script := range [][]string{append(replyScript(), captureScript()...), endScript()} {
		wantR, wantC := play(t, script)
		for _, k := range inboundKinds {
			marker := `"type":"` + k + `"`
			if !strings.Contains(strings.Join(script, ""), marker) {
				continue
			}
			seen[k] = true
			for _, newID := range []bool{false, true} {
				var msgs []string
				for _, m := range script {
					msgs = append(msgs, m)
					if strings.Contains(m, marker) {
						d := m
						if newID {
							d = strings.Replace(m, `"messageId":"`, `"messageId":"again-`, 1)
						}
						msgs = append(msgs, d)
					}
				}
				gotR, gotC := play(t, msgs) // checks that everything ends
				if newID && contentRepeatable[k] {
					continue
				}
				if fmt.Sprint(gotR) != fmt.Sprint(wantR) || fmt.Sprint(gotC) != fmt.Sprint(wantC) {
					t.Errorf("%s duplicated (new id %v):\n got %+v %+v\nwant %+v %+v", k, newID, gotR, gotC, wantR, wantC)
				}
			}
		}
	}
	if len(seen) != len(inboundKinds) {
		t.Fatalf("kinds covered: %d of %d", len(seen), len(inboundKinds))
	}
	wantR, _ := play(t, append(replyScript(), captureScript()...))
	testutil.Equal(t, "baseline reply", wantR.text, "Hi there. Bye.")
	testutil.Equal(t, "baseline segments", wantR.segments, []int{8820, 2205})
}

// TestSession_reorderEveryPair swaps every adjacent pair of the scripts.
// Sequence-numbered messages (deltas, chunks) must reassemble exactly;
// any other swap must still end every request with a defined result.
func TestSession_reorderEveryPair(t *testing.T) {
	t.Parallel()
	for _, script := range [][]string{replyScript(), captureScript(), endScript()} {
		wantR, wantC := play(t, script)
		for i := 0; i+1 < len(script); i++ {
			msgs := append([]string(nil), script...)
			msgs[i], msgs[i+1] = msgs[i+1], msgs[i]
			gotR, gotC := play(t, msgs) // play checks that everything ends
			seq := func(m string) bool {
				return strings.Contains(m, `"type":"reply.text.delta"`) || strings.Contains(m, `"type":"reply.audio.chunk"`)
			}
			if seq(script[i]) && seq(script[i+1]) {
				if fmt.Sprint(gotR) != fmt.Sprint(wantR) || fmt.Sprint(gotC) != fmt.Sprint(wantC) {
					t.Errorf("swap %d,%d changed the result:\n got %+v %+v\nwant %+v %+v", i, i+1, gotR, gotC, wantR, wantC)
				}
			}
			if gotR.err == "pending" && wantR.err != "pending" {
				t.Logf("swap %d,%d leaves r1 pending until the session ends", i, i+1)
			}
		}
	}
}
