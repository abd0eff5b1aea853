package inspect_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

var t0 = time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)

// rec is a recorder line as internal/jsonl writes it, at t0+ms.
func rec(ms int, dir, msg string) string {
	return fmt.Sprintf(`{"t":%q,"dir":%q,"msg":%s}`+"\n", t0.Add(time.Duration(ms)*time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"), dir, msg)
}

// seamLine is a timeline note of the seam (docs/inspector.md).
func seamLine(ms int, note, msg string) string {
	return fmt.Sprintf(`{"t":%q,"dir":"game","note":%q,"msg":%s}`+"\n", t0.Add(time.Duration(ms)*time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"), note, msg)
}

func request(id string) string {
	return `{"type":"reply.request","messageId":"m-` + id + `","requestId":"` + id + `","integrationId":"game","characterId":"ari","event":{"text":"hi"},"output":{"modalities":["text"],"language":"en"},"card":{"format":"chara_card_v2","mode":"reference","targetHash":"5b07a2f7636000000000000000000000000000000000000000000000000000000"}}`
}

func chunk(id string, seg, i, n, bytes int) string {
	return fmt.Sprintf(`{"type":"reply.audio.chunk","requestId":%q,"sequence":0,"segmentSequence":%d,"segmentChunkSequence":%d,"segmentChunkCount":%d,"data":%q}`,
		id, seg, i, n, base64.StdEncoding.EncodeToString(make([]byte, bytes)))
}

func write(t *testing.T, in *inspect.Inspector, lines ...string) {
	t.Helper()
	for _, l := range lines {
		n, err := in.Write([]byte(l))
		testutil.Success(t, err)
		testutil.Equal(t, "written", n, len(l))
	}
}

func ids(v view) []string {
	var out []string
	for _, r := range v.Replies {
		out = append(out, r.ID)
	}
	return out
}

// What is kept is bounded: replies in count and bytes, the log in bytes.
func TestInspector_Write_bounds(t *testing.T) {
	t.Parallel()
	t.Run("MaxReplies", func(t *testing.T) {
		t.Parallel()
		in := inspect.New(&inspect.Options{MaxReplies: 2})
		p := servePage(t, in)
		write(t, in, rec(0, "out", request("r1")), rec(1, "out", request("r2")), rec(2, "out", request("r3")))
		testutil.Equal(t, "replies kept", ids(p.snapshot(t)), []string{"r2", "r3"})
	})
	t.Run("MaxReplyBytes", func(t *testing.T) {
		t.Parallel()
		in := inspect.New(&inspect.Options{MaxReplyBytes: 200 << 10})
		p := servePage(t, in)
		write(t, in, rec(0, "out", request("r1")))
		for i := range 4 { // 128 KiB
			write(t, in, rec(1, "in", chunk("r1", i, 0, 1, 32<<10)))
		}
		write(t, in, rec(2, "out", request("r2")))
		for i := range 4 { // 128 KiB more: r1 goes
			write(t, in, rec(3, "in", chunk("r2", i, 0, 1, 32<<10)))
		}
		v := p.snapshot(t)
		testutil.Equal(t, "replies kept", ids(v), []string{"r2"})
		for i := range 3 { // 96 KiB more than r2 alone may hold: the last segment is dropped
			write(t, in, rec(4, "in", chunk("r2", 4+i, 0, 1, 32<<10)))
		}
		v = p.snapshot(t)
		segs := v.reply("r2").Segments
		testutil.Equal(t, "segments", len(segs), 7)
		testutil.Equal(t, "first segments kept", segs[0].Complete && segs[5].Dropped == "", true)
		testutil.Equal(t, "last segment dropped", segs[6].Dropped, "over MaxReplyBytes")
		status, _ := p.get(t, "/wav", url.Values{"reply": {"r2"}, "segment": {"6"}})
		testutil.Equal(t, "dropped segment not served", status, 404)
		status, body := p.get(t, "/wav", url.Values{"reply": {"r2"}, "segment": {"0"}})
		testutil.Equal(t, "kept segment served", status, 200)
		testutil.Equal(t, "kept segment's size", len(body), 44+32<<10)
	})
	t.Run("MaxLogBytes", func(t *testing.T) {
		t.Parallel()
		in := inspect.New(&inspect.Options{MaxLogBytes: 4000})
		p := servePage(t, in)
		for i := range 100 {
			write(t, in, rec(i, "in", fmt.Sprintf(`{"type":"ack","messageId":"a%d","acknowledgedMessageId":"m%d"}`, i, i)))
		}
		log := p.snapshot(t).Log
		size := 0
		for _, e := range log {
			size += 96 + len(e.Type) + e.Bytes
		}
		if size > 4000 || len(log) < 10 || log[len(log)-1].ID != 99 {
			t.Errorf("log keeps %d entries (%d bytes, last %d), want the newest within 4000 bytes", len(log), size, log[len(log)-1].ID)
		}
		status, _ := p.get(t, "/log", url.Values{"id": {"0"}})
		testutil.Equal(t, "forgotten entry", status, 404)
		status, body := p.get(t, "/log", url.Values{"id": {"99"}})
		testutil.Equal(t, "kept entry", status, 200)
		testutil.Equal(t, "kept entry's JSON", body, `{"type":"ack","messageId":"a99","acknowledgedMessageId":"m99"}`)
	})
}

// Issue #36: the seam's notes put the moments only the game knows on the
// timeline, in time order with those the messages give.
func TestInspector_Write_seam(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	write(t, in,
		seamLine(0, "transport", `{"transport":"mailbox","dir":"/tmp/mbx"}`),
		seamLine(0, "reply.submitted", `{"requestId":"r1","kind":"reply","integrationId":"game","characterId":"ari"}`),
		seamLine(5, "reply.waiting", `{"requestId":"r1","reason":"capacity","queueDepth":19,"inFlight":1,"queueLimit":20}`),
		rec(30, "out", request("r1")),
		rec(40, "in", `{"type":"reply.accepted","requestId":"r1","queueDepth":20}`),
		seamLine(50, "reply.submitted", `{"requestId":"r2","kind":"reply","integrationId":"game","characterId":"ari"}`),
		seamLine(60, "reply.ended", `{"requestId":"r2","error":"rpengine: no answer"}`),
	)
	v := p.snapshot(t)
	testutil.Equal(t, "transport", v.Session.Transport+" "+v.Session.MailboxDir, "mailbox /tmp/mbx")
	r1 := v.reply("r1")
	testutil.Equal(t, "r1 timeline", r1.points(), []string{"submitted", "waiting", "sent", "accepted"})
	testutil.Equal(t, "waiting detail", r1.Points[1].Detail, "for capacity: queueDepth 19 + 1 in flight of 20")
	testutil.Equal(t, "waited", r1.Points[2].T-r1.Points[1].T, int64(25))
	r2 := v.reply("r2")
	testutil.Equal(t, "r2 timeline", r2.points(), []string{"submitted", "error"})
	testutil.Equal(t, "r2 error", r2.Error, "rpengine: no answer")
	testutil.Equal(t, "r2 ended", r2.Ended, true)
}

// Issue #36: in file mode a segment's audio is the core's reply.segment
// note (the samples the game received), never the slot: the segment is
// complete with it, served bit-exact, and elided in the log.
func TestInspector_Write_segmentNote(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	pcm := []byte{1, 0, 0xfe, 0xff, 0x34, 0x12}
	write(t, in,
		rec(0, "out", request("r1")),
		rec(1, "in", `{"type":"reply.audio.segment","requestId":"r1","segmentSequence":0,"spokenText":"Hi.","slotIndex":3,"path":"audio/slot_0003.wav","byteLength":50}`),
		seamLine(2, "reply.segment", `{"requestId":"r1","segmentSequence":0,"sampleRate":44100,"data":"`+base64.StdEncoding.EncodeToString(pcm)+`"}`),
		seamLine(3, "reply.segment", `{"requestId":"r1","segmentSequence":1,"data":"not base64"}`),
	)
	v := p.snapshot(t)
	segs := v.reply("r1").Segments
	testutil.Equal(t, "segments", len(segs), 1)
	testutil.Equal(t, "segment", fmt.Sprintf("%v %d %d %q", segs[0].Complete, segs[0].Samples, segs[0].SampleRate, segs[0].SpokenText), `true 3 44100 "Hi."`)
	status, body := p.get(t, "/wav", url.Values{"reply": {"r1"}, "segment": {"0"}})
	testutil.Equal(t, "wav status", status, 200)
	testutil.Equal(t, "wav samples", body[44:], string(pcm))
	last := v.Log[len(v.Log)-1]
	testutil.Equal(t, "log entry", last.Dir+" "+last.Type+" "+last.Request, "game reply.segment r1")
	_, body = p.get(t, "/log", url.Values{"id": {strconv.FormatInt(last.ID, 10)}})
	testutil.Equal(t, "log entry elided", body, `{"requestId":"r1","segmentSequence":0,"sampleRate":44100,"data":"(base64 audio elided: 6 bytes)"}`)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0].Text, "unreadable reply.segment note") {
		t.Errorf("notes %+v, want the unreadable note's", v.Notes)
	}
}

// request.error: a retryable one is a point, another ends its reply, and
// one naming nothing is the refusal of the oldest message not acked.
func TestInspector_Write_requestError(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	write(t, in,
		rec(0, "out", request("r1")),
		rec(1, "in", `{"type":"request.error","requestId":"r1","code":"capacity_exceeded","message":"full","retryable":true}`),
		rec(2, "out", request("r2")),
		rec(2, "out", `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"g1","acknowledgedMessageId":"e1"}`),
		rec(3, "in", `{"type":"ack","acknowledgedMessageId":"m-r1"}`),
		rec(4, "in", `{"type":"request.error","requestId":null,"code":"invalid_payload","message":"bad card"}`),
	)
	v := p.snapshot(t)
	testutil.Equal(t, "r1 timeline", v.reply("r1").points(), []string{"sent", "error"})
	testutil.Equal(t, "r1 goes on", v.reply("r1").Ended, false)
	testutil.Equal(t, "r2 refused", v.reply("r2").Error, "invalid_payload: bad card")
	acks := 0
	for _, e := range v.Log {
		if e.Dir == "out" && e.Type == "ack" {
			acks++
		}
	}
	testutil.Equal(t, "the game's ack in the log", acks, 1)
}

// A reply.request's recorded speech is elided in the log and described
// in the prompt; lines may span Writes, and a line too long is dropped
// with a note.
func TestInspector_Write_lines(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	speech := base64.StdEncoding.EncodeToString(make([]byte, 32000))
	req := strings.Replace(request("r1"), `"event":{"text":"hi"}`, `"event":{"audio":{"format":"pcm_s16le","sampleRate":16000,"channels":1,"data":"`+speech+`","language":"en"}}`, 1)
	l := rec(0, "out", req) + rec(1, "in", `{"type":"reply.accepted","requestId":"r1"}`)
	write(t, in, l[:100], l[100:len(l)-30], l[len(l)-30:])
	write(t, in, strings.Repeat("x", 10<<20), "\n", rec(2, "in", `{"type":"reply.completed","requestId":"r1"}`))
	v := p.snapshot(t)
	r := v.reply("r1")
	testutil.Equal(t, "timeline", r.points(), []string{"sent", "accepted", "completed"})
	testutil.Equal(t, "speech described", r.Prompt["event.audio"], "1.00 s of speech (en)")
	_, body := p.get(t, "/log", url.Values{"id": {"0"}})
	if !strings.Contains(body, `"data":"(base64 audio elided: 32000 bytes)"`) || strings.Contains(body, "AAAA") {
		t.Errorf("speech not elided: %.300s", body)
	}
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0].Text, "over 9 MiB") {
		t.Errorf("notes %+v, want the long line's", v.Notes)
	}
}

// The Logger's records go beside the reply they name, or to the session,
// at every level, while the next handler sees only what it enables.
func TestInspector_Logger(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	write(t, in, rec(0, "out", request("r1")))
	var buf testutil.SyncBuffer
	log := in.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	log.Warn("rpengine: dropped malformed engine message", "type", "reply.text.delta", "requestId", "r1", "reason", "bad sequence")
	log.Debug("rpengine: reply stream anomaly", "requestId", "r1", "detail", "gap")
	log.With("k", "v").WithGroup("g").Warn("rpengine: closed connection", "a", 1)
	log.Info("rpengine: serving mailbox", "dir", "/tmp/mbx")
	v := p.snapshot(t)
	notes := v.reply("r1").Notes
	testutil.Equal(t, "reply notes", len(notes), 2)
	testutil.Equal(t, "warning", notes[0].Text, "rpengine: dropped malformed engine message type=reply.text.delta requestId=r1 reason=\"bad sequence\"")
	testutil.Equal(t, "anomaly", notes[1].Level+" "+notes[1].Text, "DEBUG rpengine: reply stream anomaly requestId=r1 detail=gap")
	testutil.Equal(t, "session note", v.Notes[0].Text, "rpengine: closed connection k=v g.a=1")
	out := buf.String()
	if strings.Contains(out, "anomaly") || strings.Contains(out, "serving mailbox") || !strings.Contains(out, "g.a=1") {
		t.Errorf("the next handler got:\n%s", out)
	}
}

// At most MaxWatchers pages watch; Close ends them and refuses more.
func TestInspector_watchers(t *testing.T) {
	t.Parallel()
	in := inspect.New(&inspect.Options{MaxWatchers: 1})
	p := servePage(t, in)
	u, _ := url.Parse(in.URL(p.addr))
	u.Path = "/events"
	res, err := http.Get(u.String())
	testutil.Success(t, err)
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	first, _ := br.ReadString('\n')
	testutil.Equal(t, "first line", first, "retry: 1000\n")
	status, body := p.get(t, "/events", nil)
	testutil.Equal(t, "a second page", status, 503)
	testutil.Equal(t, "a second page is told", strings.TrimSpace(body), "inspect: too many pages watching")
	testutil.Success(t, in.Close())
	_, err = io.ReadAll(br) // the stream ends
	testutil.Success(t, err)
	status, _ = p.get(t, "/", nil)
	testutil.Equal(t, "after Close", status, 503)
	write(t, in, rec(0, "out", request("r1"))) // ignored
}

// A page that stops reading is dropped once 8 MiB of events wait for
// it (or a write to it has waited 10 s); its stream ends, so its browser
// reconnects to a fresh snapshot.
func TestInspector_slowPage(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	u, _ := url.Parse(in.URL(p.addr))
	u.Path = "/events"
	// A page never dropped fails the test at the deadline: two minutes,
	// since 36 MB through the inspector under the race detector on a
	// loaded machine took over 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	res, err := http.DefaultClient.Do(req)
	testutil.Success(t, err)
	defer res.Body.Close()
	write(t, in, rec(0, "out", request("r1")))
	delta := strings.Repeat("y", 60<<10)
	for range 600 { // 36 MB of text events: more than the socket's buffers and the bound
		write(t, in, rec(1, "in", `{"type":"reply.text.delta","requestId":"r1","delta":"`+delta+`"}`))
	}
	write(t, in, rec(2, "in", `{"type":"reply.completed","requestId":"r1"}`))
	b, err := io.ReadAll(res.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // cut at the bound, or by the write deadline first
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "event: text"); n == 600 || strings.Contains(string(b), `"name":"completed"`) {
		t.Errorf("the page got all %d text events and the last one: it was not dropped", n)
	}
}
