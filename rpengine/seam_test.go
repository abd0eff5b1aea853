package rpengine_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// recLine is one line of a recording.
type recLine struct {
	Dir  string
	Note string
	Msg  json.RawMessage
	Raw  *string
	Type string // the message's type, or the note's name
	Map  map[string]any
}

// recording parses every line of rec, which must all be JSON objects
// with their message as JSON (none kept raw).
func recording(t *testing.T, rec *testutil.SyncBuffer) []recLine {
	t.Helper()
	var ls []recLine
	sc := bufio.NewScanner(strings.NewReader(rec.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l recLine
		testutil.Success(t, json.Unmarshal(sc.Bytes(), &l))
		if l.Raw != nil {
			t.Errorf("a message kept raw: %.200s", sc.Text())
		}
		_ = json.Unmarshal(l.Msg, &l.Map)
		l.Type, _ = l.Map["type"].(string)
		if l.Dir == "game" {
			l.Type = l.Note
		}
		ls = append(ls, l)
	}
	testutil.Success(t, sc.Err())
	return ls
}

// notes returns the game's notes named name, their fields without data.
func notes(ls []recLine, name string) []map[string]any {
	var out []map[string]any
	for _, l := range ls {
		if l.Dir == "game" && l.Note == name {
			m := maps(l.Map)
			delete(m, "data")
			out = append(out, m)
		}
	}
	return out
}

func maps(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// index returns the position of the first line of dir and type typ
// whose requestId is id, or -1.
func index(ls []recLine, dir, typ, id string) int {
	return slices.IndexFunc(ls, func(l recLine) bool { return l.Dir == dir && l.Type == typ && l.Map["requestId"] == id })
}

// Issue #36: with a Recorder, the server writes the game's own moments
// as "dir":"game" notes beside the messages (docs/inspector.md, "The
// seam"): the transport, each request submitted and ended (with the
// engine's error), the session ended, and in file mode each segment the
// game received with its samples, which no message holds.
func TestServer_seamNotes(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		rec := &testutil.SyncBuffer{}
		l := tr.start(t, &rpengine.ServerOptions{Recorder: rec}, &enginetest.Options{Responder: func(r enginetest.Request) enginetest.Script {
			if r.Text == "Break, please." {
				return enginetest.Script{Error: "request_failed", ErrorMessage: "the model stopped"}
			}
			return enginetest.DefaultScript(r)
		}})
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, audioReq(testCard(t), "hello"))
		testutil.Success(t, err)
		var segs [][]int16
		for _, ev := range collect(t, r) {
			if ev.Kind == rpengine.EventSegment {
				segs = append(segs, ev.Segment.Samples)
			}
		}
		broken, err := l.srv.Reply(ctx, textReq(testCard(t), "Break, please."))
		testutil.Success(t, err)
		_, berr := broken.Wait(ctx)
		var rerr *rpengine.RequestError
		testutil.ErrorAs(t, berr, &rerr)
		sid := l.eng.SessionID()
		l.eng.Close()
		testutil.Success(t, l.srv.Close())

		ls := recording(t, rec)
		tn := map[string]any{"transport": tr.name}
		if tr.name == "mailbox" {
			tn["dir"] = l.dir
		}
		testutil.Equal(t, "transport", notes(ls, "transport"), []map[string]any{tn})
		testutil.Equal(t, "submitted", notes(ls, "reply.submitted"), []map[string]any{
			{"requestId": r.RequestID(), "kind": "reply", "integrationId": "game", "characterId": "ari"},
			{"requestId": broken.RequestID(), "kind": "reply", "integrationId": "game", "characterId": "ari"}})
		testutil.Equal(t, "ended", notes(ls, "reply.ended"), []map[string]any{
			{"requestId": r.RequestID(), "error": ""},
			{"requestId": broken.RequestID(), "error": berr.Error()}})
		testutil.Equal(t, "session ended", notes(ls, "session.ended"), []map[string]any{{"sessionId": sid}})
		testutil.Equal(t, "no waiting", len(notes(ls, "reply.waiting")), 0)
		// Each note in its place among the messages.
		id := r.RequestID()
		if sub, sent, done, end := index(ls, "game", "reply.submitted", id), index(ls, "out", "reply.request", id),
			index(ls, "in", "reply.completed", id), index(ls, "game", "reply.ended", id); sub > sent || sent > done || done > end {
			t.Errorf("lines submitted %d, sent %d, completed %d, ended %d: out of order", sub, sent, done, end)
		}

		// The segments the game received, with their samples (file mode).
		var got [][]int16
		for _, l := range ls {
			if l.Dir != "game" || l.Note != "reply.segment" {
				continue
			}
			testutil.Equal(t, "segment of", l.Map["requestId"], any(id))
			testutil.Equal(t, "segment index", l.Map["segmentSequence"], any(float64(len(got))))
			testutil.Equal(t, "segment rate", l.Map["sampleRate"], any(44100.0))
			pcm, err := base64.StdEncoding.DecodeString(l.Map["data"].(string))
			testutil.Success(t, err)
			s := make([]int16, len(pcm)/2)
			for i := range s {
				s[i] = int16(binary.LittleEndian.Uint16(pcm[2*i:]))
			}
			got = append(got, s)
		}
		want := segs
		if tr.name == "websocket" {
			want = nil // its chunks carry the audio
		}
		testutil.Equal(t, "segments recorded", got, want)
	})
}

// Issue #36: reply.waiting says why a request waits at the gate, once
// per reason, with the engine's queue: for an engine, for capacity
// (queueDepth and limit of the last capacity.update, and the requests the
// gate counts on top of them), for earlier requests, for the character's
// previous request; and a request that never left the line, or was
// refused before it was sent, ends with its error.
func TestServer_seamWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rec := &testutil.SyncBuffer{}
		f := newServer(t, &rpengine.ServerOptions{Recorder: rec})
		ctx := ctxT(t)
		c := testCard(t)
		reqFor := func(char, text string) rpengine.ReplyRequest {
			q := textReq(c, text)
			q.CharacterID = char
			return q
		}
		// Nobody connected: r0 waits for an engine until its ctx ends.
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := f.srv.Reply(short, reqFor("ari", "r0"))
		testutil.ErrorIs(t, err, context.DeadlineExceeded)

		// A queue of one, and an engine slow to answer: r1 is sent, r2 (bo)
		// waits for capacity, r3 (ari) behind it, then for capacity too;
		// then r4 is sent and r5 waits for r4's character, then capacity.
		f.dial(t, &enginetest.Options{QueueLimit: 1, Faults: enginetest.Faults{Delay: 100 * time.Millisecond}})
		// One over 8 MiB is refused once encoded, never sent.
		_, bigErr := f.srv.Reply(ctx, reqFor("ari", strings.Repeat("a", 8<<20)))
		var fe *rpengine.FieldError
		testutil.ErrorAs(t, bigErr, &fe)
		send := func(qs ...rpengine.ReplyRequest) {
			synctest.Wait() // the engine's last capacity.update is in
			done := make(chan error, len(qs))
			for _, q := range qs {
				go func() {
					r, err := f.srv.Reply(ctx, q)
					if err == nil {
						_, err = r.Wait(ctx)
					}
					done <- err
				}()
				synctest.Wait()
			}
			for range qs {
				testutil.Success(t, <-done)
			}
		}
		send(reqFor("ari", "r1"), reqFor("bo", "r2"), reqFor("ari", "r3"))
		send(reqFor("ari", "r4"), reqFor("ari", "r5"))
		testutil.Success(t, f.srv.Close())

		ls := recording(t, rec)
		ids := map[string]string{} // text: requestId
		for _, l := range ls {
			if l.Dir == "out" && l.Type == "reply.request" {
				ids[l.Map["event"].(map[string]any)["text"].(string)] = l.Map["requestId"].(string)
			}
		}
		sub := notes(ls, "reply.submitted")
		testutil.Equal(t, "submitted", len(sub), 7)
		r0 := sub[0]["requestId"]
		w := func(id any, reason string, depth, limit, inflight float64) map[string]any {
			return map[string]any{"requestId": id, "reason": reason, "queueDepth": depth, "queueLimit": limit, "inFlight": inflight}
		}
		waits := notes(ls, "reply.waiting")
		if n := len(waits); n == 6 {
			// r4 accepted: counted in flight until the engine's next
			// capacity.update counts it, whichever r5 saw.
			if last := waits[n-1]; last["queueDepth"].(float64)+last["inFlight"].(float64) == 1 {
				last["queueDepth"], last["inFlight"] = 1.0, 0.0
			}
		}
		testutil.Equal(t, "waiting", waits, []map[string]any{
			w(r0, "engine", 0, 0, 0),
			w(ids["r2"], "capacity", 0, 1, 1),
			w(ids["r3"], "queue", 0, 1, 0),
			w(ids["r3"], "capacity", 0, 1, 1),
			w(ids["r5"], "character", 0, 1, 0),
			w(ids["r5"], "capacity", 1, 1, 0),
		})
		ended := notes(ls, "reply.ended")
		testutil.Equal(t, "r0 ended", ended[0], map[string]any{"requestId": r0, "error": "rpengine: waiting for an engine connection: context deadline exceeded"})
		if e, _ := ended[1]["error"].(string); ended[1]["requestId"] != sub[1]["requestId"] || !strings.HasSuffix(e, fe.Reason) {
			t.Errorf("the request over 8 MiB ended with %v, want its error %q", ended[1], fe.Reason)
		}
		testutil.Equal(t, "ended", len(ended), 7)
	})
}
