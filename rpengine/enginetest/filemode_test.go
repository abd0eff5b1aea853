package enginetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

const fmCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"A fox.","personality":"curious","scenario":"a forest","first_mes":"Hi!","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"test","character_version":"1","alternate_greetings":[],"tags":["fox"],"extensions":{}}}`

// inbound returns the engine messages the game recorded in rec, decoded.
func inbound(t *testing.T, rec *testutil.SyncBuffer, typ string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(rec.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var line struct {
			Dir string         `json:"dir"`
			Msg map[string]any `json:"msg"`
		}
		testutil.Success(t, json.Unmarshal(sc.Bytes(), &line))
		if line.Dir == "in" && line.Msg["type"] == typ {
			out = append(out, line.Msg)
		}
	}
	return out
}

// fileGame serves a mailbox with a recorder and dials a file-mode engine.
func fileGame(t *testing.T, eopts *enginetest.Options) (*rpengine.Server, *enginetest.Engine, *testutil.SyncBuffer) {
	t.Helper()
	rec := &testutil.SyncBuffer{}
	dir := filepath.Join(testutil.TempDir(t), "mb")
	srv, err := rpengine.NewServer(&rpengine.ServerOptions{Recorder: rec,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Mailbox: &rpengine.MailboxOptions{Dir: dir, IntegrationID: "game", SlotCount: 8,
			ActivePoll: 2 * time.Millisecond, IdlePoll: 5 * time.Millisecond}})
	testutil.Success(t, err)
	testutil.Success(t, srv.Start())
	t.Cleanup(func() { testutil.Success(t, srv.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := enginetest.DialMailbox(ctx, dir, eopts, &enginetest.MailboxOptions{Poll: 2 * time.Millisecond, AckLinger: 50 * time.Millisecond})
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	for {
		info, err := srv.WaitSession(ctx)
		testutil.Success(t, err)
		if info.ID == eng.SessionID() {
			return srv, eng, rec
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFileMode_mergesTextDeltas(t *testing.T) {
	t.Parallel()
	sentence := strings.Repeat("word ", 40) + "end."
	srv, _, rec := fileGame(t, &enginetest.Options{Responder: func(enginetest.Request) enginetest.Script {
		return enginetest.Script{Sentences: []string{sentence}}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := card.Parse([]byte(fmCard))
	testutil.Success(t, err)
	r, err := srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Text: "talk"})
	testutil.Success(t, err)
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, sentence)
	testutil.Success(t, srv.Close()) // the recording is written
	deltas := inbound(t, rec, "reply.text.delta")
	if len(deltas) == 0 || len(deltas) >= 41 {
		t.Fatalf("%d deltas for 41 words: not merged", len(deltas))
	}
	var text strings.Builder
	for i, d := range deltas {
		testutil.Equal(t, "contiguous sequence", d["sequence"], any(float64(i)))
		text.WriteString(d["delta"].(string))
	}
	testutil.Equal(t, "merged text", text.String(), sentence)
	t.Logf("41 word deltas arrived as %d merged deltas", len(deltas))
}

func TestFileMode_levelsAreLossy(t *testing.T) {
	t.Parallel()
	const levels = 24
	srv, _, rec := fileGame(t, &enginetest.Options{
		Faults: enginetest.Faults{Delay: 20 * time.Millisecond},
		Responder: func(enginetest.Request) enginetest.Script {
			return enginetest.Script{Sentences: []string{"Yes."}, Levels: levels}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := card.Parse([]byte(fmCard))
	testutil.Success(t, err)
	r, err := srv.Capture(ctx, rpengine.CaptureRequest{IntegrationID: "game", CharacterID: "ari", Card: c})
	testutil.Success(t, err)
	_, err = r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Success(t, srv.Close()) // the recording is written
	got := inbound(t, rec, "voice.capture.level")
	if len(got) == 0 || len(got) > levels/4 {
		t.Fatalf("%d of %d level samples arrived; want the newest per 250 ms", len(got), levels)
	}
	prev := 0.0
	for _, l := range got {
		s := l["seconds"].(float64)
		if s <= prev {
			t.Fatalf("levels out of order: %v", got)
		}
		prev = s
	}
	t.Logf("%d level samples sent, %d kept", levels, len(got))
}

// Issue #15: in file mode the engine sends no reply.audio.start when it
// spoke, and reply.audio.completed carries the WebSocket totals: chunkCount
// is the chunks a socket would have carried.
func TestFileMode_audioTotals(t *testing.T) {
	t.Parallel()
	srv, _, rec := fileGame(t, &enginetest.Options{SecondsPerSentence: 0.8})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := card.Parse([]byte(fmCard))
	testutil.Success(t, err)
	r, err := srv.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Text: "talk",
		Voice: "F2"})
	testutil.Success(t, err)
	_, err = r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Success(t, srv.Close()) // the recording is written
	testutil.Equal(t, "no reply.audio.start", len(inbound(t, rec, "reply.audio.start")), 0)
	segs := inbound(t, rec, "reply.audio.segment")
	testutil.Equal(t, "segments", len(segs), 2)
	done := inbound(t, rec, "reply.audio.completed")
	testutil.Equal(t, "one reply.audio.completed", len(done), 1)
	// 0.8 s is 35280 samples, 70560 bytes: 3 chunks of at most 32 KiB.
	got := []any{done[0]["segmentCount"], done[0]["totalBytes"], done[0]["chunkCount"], done[0]["durationSeconds"]}
	testutil.Equal(t, "totals", got, []any{2.0, 2 * 70560.0, 6.0, 1.6})
}

// LooseEnds counts, as the engine sees them, its messages the game has
// not acknowledged and the segments it has not given back: none while
// the game runs, and what the engine sends once the game has stopped
// (issue #31).
func TestFileMode_looseEnds(t *testing.T) {
	t.Parallel()
	srv, eng, _ := fileGame(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := eng.Send(ctx, "capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	testutil.Success(t, err)
	for !acked(eng, id) {
		time.Sleep(time.Millisecond)
	}
	testutil.Equal(t, "while the game runs", eng.LooseEnds(), enginetest.LooseEnds{})
	testutil.Success(t, srv.Close())
	_, err = eng.Send(ctx, "capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	testutil.Success(t, err)
	_, err = eng.Send(ctx, "reply.audio.segment", map[string]any{"requestId": "r", "segmentSequence": 0, "slotIndex": 3,
		"path": "audio/slot_0003.wav", "format": "wav_pcm_s16le", "sampleRate": 44100, "channels": 1,
		"durationSeconds": 0.1, "byteLength": 8864, "peerInstanceId": eng.PeerInstanceID()})
	testutil.Success(t, err)
	testutil.Equal(t, "once it stopped", eng.LooseEnds(),
		enginetest.LooseEnds{Unacked: []string{"capacity.update", "reply.audio.segment"}, Unconsumed: []int{3}})
}

// acked reports whether the game acknowledged the engine's message id.
func acked(eng *enginetest.Engine, id string) bool {
	for _, m := range eng.Received() {
		if m.Type == "ack" && strings.Contains(string(m.Raw), `"acknowledgedMessageId":"`+id+`"`) {
			return true
		}
	}
	return false
}
