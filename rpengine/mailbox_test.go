package rpengine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// waitFile waits until name exists.
func waitFile(t *testing.T, name string) {
	t.Helper()
	for deadline := time.Now().Add(waitBound); !time.Now().After(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", name)
}

// rawEngine plays the engine by hand: it writes messages into
// engine-to-integration and reads what the game writes, without removing
// anything unless asked.
type rawEngine struct {
	t    *testing.T
	dir  string
	root *os.Root
	last int64
}

func newRawEngine(t *testing.T, dir string) *rawEngine {
	waitFile(t, filepath.Join(dir, mbx.ManifestName))
	root, err := os.OpenRoot(dir)
	testutil.Success(t, err)
	t.Cleanup(func() { root.Close() })
	return &rawEngine{t: t, dir: dir, root: root}
}

// send writes one engine message and returns its messageId and stem.
func (e *rawEngine) send(typ, sessionID string, fields any) (id, stem string) {
	id = wire.NewID()
	b, err := wire.Encode(typ, id, sessionID, time.Now(), fields)
	testutil.Success(e.t, err)
	return id, e.sendRaw(id, b)
}

func (e *rawEngine) sendRaw(id string, b []byte) string {
	e.last = max(time.Now().UnixMilli(), e.last+1)
	stem := mbx.Stem(e.last, id)
	testutil.Success(e.t, mbx.Write(e.root, mbx.FromEngine, stem, b))
	return stem
}

// gameMessages returns the game's marked messages, in stem order.
func (e *rawEngine) gameMessages() []map[string]any {
	ready, _, err := mbx.List(e.root, mbx.ToEngine)
	testutil.Success(e.t, err)
	var out []map[string]any
	for _, r := range ready {
		b, err := mbx.ReadRegular(e.root, filepath.Join(mbx.ToEngine, r.Stem+".json"), wire.MaxMessageBytes)
		if errors.Is(err, fs.ErrNotExist) {
			// Removed between List and read: the game drops the unread
			// messages of an ended session (TestMailbox_newHelloDropsUnread),
			// and a real engine sees the same race.
			continue
		}
		testutil.Success(e.t, err)
		var m map[string]any
		testutil.Success(e.t, json.Unmarshal(b, &m))
		if m["protocol"] == nil {
			continue // not the game's (a test's fixture)
		}
		testutil.Equal(e.t, "stem names the messageId", any(r.ID), m["messageId"])
		m["_stem"] = r.Stem
		out = append(out, m)
	}
	return out
}

// waitGame waits for a game message matching match.
func (e *rawEngine) waitGame(match func(map[string]any) bool) map[string]any {
	e.t.Helper()
	for deadline := time.Now().Add(waitBound); !time.Now().After(deadline); time.Sleep(time.Millisecond) {
		for _, m := range e.gameMessages() {
			if match(m) {
				return m
			}
		}
	}
	e.t.Fatal("game message never came")
	return nil
}

// reply makes the game send req and, as the engine would, accepts it
// (reply.accepted) in session sid: Reply returns at that decision
// (issue #15).
func (e *rawEngine) reply(ctx context.Context, srv *rpengine.Server, sid string, req rpengine.ReplyRequest) *rpengine.Reply {
	e.t.Helper()
	if req.RequestID == "" {
		req.RequestID = "raw-" + wire.NewID()
	}
	type result struct {
		r   *rpengine.Reply
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := srv.Reply(ctx, req)
		got <- result{r, err}
	}()
	m := e.waitGame(func(m map[string]any) bool { return m["type"] == "reply.request" && m["requestId"] == req.RequestID })
	hash := strings.Repeat("0", 64)
	if c, ok := m["card"].(map[string]any); ok {
		if h, ok := c["targetHash"].(string); ok {
			hash = h
		}
	}
	e.send("reply.accepted", sid, map[string]any{"requestId": req.RequestID, "eventId": m["eventId"], "resolvedCardHash": hash, "queueDepth": 1})
	res := <-got
	testutil.Success(e.t, res.err)
	return res.r
}

func ackOf(id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == "ack" && m["acknowledgedMessageId"] == id }
}

func countAcks(msgs []map[string]any, id string) int {
	n := 0
	for _, m := range msgs {
		if ackOf(id)(m) {
			n++
		}
	}
	return n
}

// hello performs the handshake by hand and returns the welcome.
func (e *rawEngine) hello() map[string]any {
	id, _ := e.send("hello", "", map[string]string{"clientVersion": "raw"})
	e.waitGame(ackOf(id))
	return e.waitGame(func(m map[string]any) bool { return m["type"] == "welcome" })
}

func TestMailbox_layoutAndHandshake(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		opts := testMailboxOptions(dir)
		opts.SlotCount = 0 // the spec's 2048
		opts.DisplayName = "My Game"
		l := newMailboxServer(t, &rpengine.ServerOptions{Mailbox: opts}, dir)
		testutil.Equal(t, "MailboxDir", l.srv.MailboxDir(), dir)
		e := newRawEngine(t, dir)
		b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		testutil.Success(t, err)
		var man map[string]any
		testutil.Success(t, json.Unmarshal(b, &man))
		want := map[string]any{"schema": "gemtavern.rp_engine.file_transport", "version": 1.0, "integrationId": "game", "displayName": "My Game",
			"mailboxes": map[string]any{"integrationToEngine": "integration-to-engine", "engineToIntegration": "engine-to-integration"},
			"audio":     map[string]any{"format": "wav_pcm_s16le", "directory": "audio", "slotPattern": "slot_%04d.wav", "slotCount": 2048.0, "sampleRate": 44100.0, "channels": 1.0}}
		testutil.Equal(t, "manifest", man, want)
		slots, err := os.ReadDir(filepath.Join(dir, "audio"))
		testutil.Success(t, err)
		testutil.Equal(t, "slot files", len(slots), 2048)
		for _, i := range []int{0, 7, 2047} {
			b, err := os.ReadFile(filepath.Join(dir, "audio", mbx.SlotName(i)))
			testutil.Success(t, err)
			w, err := mbx.DecodeWAV(b)
			testutil.Success(t, err)
			testutil.Equal(t, "placeholder", w, mbx.WAV{Rate: 44100, Channels: 1, PCM: []byte{0, 0}})
		}
		testutil.Equal(t, "slot name", slots[7].Name(), "slot_0007.wav")

		w := e.hello()
		testutil.Equal(t, "nextAudioSlot", w["nextAudioSlot"], 0.0)
		if p, _ := w["peerInstanceId"].(string); p == "" {
			t.Fatalf("welcome without peerInstanceId: %v", w)
		}
		sid, _ := w["sessionId"].(string)
		info, err := l.srv.WaitSession(ctxT(t))
		testutil.Success(t, err)
		testutil.Equal(t, "session", info.ID, sid)
		testutil.Equal(t, "client version", info.ClientVersion, "raw")
		// Stems are 13 digits and strictly increasing; each JSON has its marker.
		var stems []string
		for _, m := range e.gameMessages() {
			stems = append(stems, m["_stem"].(string))
		}
		testutil.Equal(t, "sorted", slices.IsSorted(stems), true)
		for i := 1; i < len(stems); i++ {
			a, _, _ := mbx.ParseStem(stems[i-1])
			b, _, _ := mbx.ParseStem(stems[i])
			if b <= a {
				t.Fatalf("stems not strictly increasing: %v", stems)
			}
		}
		names, _ := os.ReadDir(filepath.Join(dir, mbx.ToEngine))
		for _, n := range names {
			if strings.HasPrefix(n.Name(), ".") {
				t.Errorf("temporary file left: %s", n.Name())
			}
		}
		testutil.Equal(t, "json + ready", len(names), 2*len(stems))
	})
}

func TestMailbox_inboundRules(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		sid := e.hello()["sessionId"].(string)
		// A JSON without its marker is ignored until the marker comes.
		id := wire.NewID()
		b, _ := wire.Encode("capacity.update", id, sid, time.Now(), map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": false})
		e.last = max(time.Now().UnixMilli(), e.last+1)
		stem := mbx.Stem(e.last, id)
		testutil.Success(t, os.WriteFile(filepath.Join(dir, mbx.FromEngine, stem+".json"), b, 0o644))
		time.Sleep(30 * time.Millisecond) // fake time: the polls of 30 ms
		synctest.Wait()
		testutil.Equal(t, "not read without .ready", countAcks(e.gameMessages(), id), 0)
		testutil.Success(t, os.WriteFile(filepath.Join(dir, mbx.FromEngine, stem+".ready"), nil, 0o644))
		e.waitGame(ackOf(id))
		// The ack is written before the message is processed: wait for it.
		c, _ := l.srv.Capacity()
		for i := 0; i < 5000 && !c.Known; i++ {
			time.Sleep(time.Millisecond)
			c, _ = l.srv.Capacity()
		}
		testutil.Equal(t, "capacity processed", c.Known && !c.AcceptingRequests, true)

		// Bad files are skipped with a log line, and the reader goes on.
		foreign := `{"protocol":"other","protocolVersion":3,"type":"ack","messageId":"x1","timestamp":"t"}`
		e.sendRaw("foreign1", []byte(foreign))
		e.sendRaw("garbage1", []byte("{not json"))
		big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("a"), 8<<20)...)
		e.sendRaw("big1", append(big, `"}`...))
		okID, _ := e.send("capacity.update", sid, map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		e.waitGame(ackOf(okID))
		l.log.waitFor(t, "unsupported protocol")
		l.log.waitFor(t, "not a JSON object")
		l.log.waitFor(t, "over the size limit")
		// Each message is read once: one ack each, even after more polls, and
		// a repeated messageId (a new file) is acked as a duplicate only.
		e.sendRaw(okID, mustEncode(t, "capacity.update", okID, sid))
		e.waitGame(func(m map[string]any) bool { return ackOf(okID)(m) && m["duplicate"] == true })
		time.Sleep(30 * time.Millisecond) // fake time: the polls of 30 ms
		synctest.Wait()
		testutil.Equal(t, "acks of the capacity", countAcks(e.gameMessages(), okID), 2)
		testutil.Equal(t, "acks of the first", countAcks(e.gameMessages(), id), 1)
		// A message of another session is acked (so the engine can delete
		// it) but not processed.
		otherID, _ := e.send("capacity.update", "another-session", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": false})
		e.waitGame(ackOf(otherID))
		c, _ = l.srv.Capacity()
		testutil.Equal(t, "foreign session ignored", c.AcceptingRequests, true)
	})
}

// TestMailbox_badFilesNeverDelay: unparsable and unreadable marked files
// with the oldest names do not hold back a good one behind them: the
// welcome comes while their grace period is still running, well within
// the engine's 5 s hello timeout, and each is skipped with one log line.
// Issue #16: eight such files delayed the welcome to 8.2 s.
func TestMailbox_badFilesNeverDelay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		for i := range 8 {
			id := fmt.Sprintf("bad%d", i)
			if i%2 == 0 {
				e.sendRaw(id, []byte("{half a mess")) // unparsable: given a grace period
				continue
			}
			// Unreadable: a folder where the JSON should be.
			e.last = max(time.Now().UnixMilli(), e.last+1)
			stem := mbx.Stem(e.last, id)
			testutil.Success(t, os.Mkdir(filepath.Join(dir, mbx.FromEngine, stem+".json"), 0o700))
			testutil.Success(t, os.WriteFile(filepath.Join(dir, mbx.FromEngine, stem+".ready"), nil, 0o600))
		}
		e.hello()
		testutil.Equal(t, "unparsable files still in their grace period when the welcome came",
			strings.Count(l.log.String(), "not a JSON object"), 0)
		for i := 0; i < 500 && strings.Count(l.log.String(), "not a JSON object") < 4; i++ {
			time.Sleep(10 * time.Millisecond) // the grace period is 1 s
		}
		time.Sleep(30 * time.Millisecond) // fake time: more polls
		synctest.Wait()
		testutil.Equal(t, "each bad file logged once", strings.Count(l.log.String(), "skipped engine mailbox file"), 8)
	})
}

// TestMailbox_recurringConditionsLoggedOnce: an inbox that cannot be
// read and an outbox that cannot be written are each logged once when
// they start and once when they end, with a count, however many polls
// meet them. Issue #16: 4 to 15 lines a second while idle.
func TestMailbox_recurringConditionsLoggedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		sid := e.hello()["sessionId"].(string)
		// A file in place of the outbox cannot be written into, even by
		// root (as CI runs). It goes in with two renames, so the game
		// seldom sees the name missing; if it did, the name is taken again.
		replace := func(name string, folder bool) {
			p := filepath.Join(dir, name)
			if folder {
				testutil.Success(t, os.Mkdir(p+".new", 0o700))
			} else {
				testutil.Success(t, os.WriteFile(p+".new", nil, 0o600))
			}
			for i := 0; ; i++ {
				old := p + ".old" + strconv.Itoa(i)
				_ = os.Rename(p, old)
				if os.Rename(p+".new", p) == nil {
					break
				}
			}
			for i := 0; ; i++ {
				if _, err := os.Lstat(p + ".old" + strconv.Itoa(i)); err != nil {
					break
				}
				testutil.Success(t, testutil.RemoveAll(p+".old"+strconv.Itoa(i)))
			}
		}
		// Outbox first: an engine message whose ack cannot be written is
		// retried at every poll.
		replace(mbx.ToEngine, false)
		e.send("capacity.update", sid, map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		l.log.waitFor(t, "outbox cannot be written")
		// The inbox cannot be listed (as a folder without read permission).
		rpengine.FailMailboxInbox(l.srv, errors.New("permission denied"))
		l.log.waitFor(t, "inbox cannot be read")
		time.Sleep(100 * time.Millisecond) // fake time: 20 idle polls
		synctest.Wait()
		for _, what := range []string{"outbox cannot be written", "inbox cannot be read"} {
			testutil.Equal(t, what+": logged once while it lasts", strings.Count(l.log.String(), what), 1)
		}
		replace(mbx.ToEngine, true)
		rpengine.FailMailboxInbox(l.srv, nil)
		l.log.waitFor(t, "outbox cannot be written: no longer")
		l.log.waitFor(t, "inbox cannot be read: no longer")
		log := l.log.String()
		for _, what := range []string{"outbox cannot be written", "inbox cannot be read"} {
			testutil.Equal(t, what+": a start and an end line", strings.Count(log, what), 2)
			i := strings.Index(log, what+": no longer")
			end := log[i:]
			end = end[:strings.IndexByte(end, '\n')]
			n, _ := strconv.Atoi(strings.Fields(end[strings.Index(end, "times=")+len("times="):])[0])
			if n < 2 {
				t.Errorf("%s: the end line counts %d occurrences, want several: %s", what, n, end)
			}
		}
	})
}

// TestMailbox_longPath: a mailbox folder whose path is longer than the
// 260 characters of Windows' classic path limit is served, read, written
// and cleaned as any other. Issue #22.
func TestMailbox_longPath(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := testutil.TempDir(t)
		for len(dir) < 300 {
			dir = filepath.Join(dir, strings.Repeat("d", 40))
		}
		testutil.Success(t, os.MkdirAll(dir, 0o700))
		dir = filepath.Join(dir, "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), audioReq(testCard(t), "far away"))
		testutil.Success(t, err)
		for {
			ev, err := r.Next(ctxT(t))
			testutil.Success(t, err)
			if ev.Kind == rpengine.EventSegment {
				break
			}
		}
		_, err = r.Wait(ctxT(t))
		testutil.Success(t, err)
		eng.Close()
		if len(l.srv.MailboxDir()) <= 260 {
			t.Fatalf("path of %d characters", len(l.srv.MailboxDir()))
		}
	})
}

func mustEncode(t *testing.T, typ, id, sid string) []byte {
	b, err := wire.Encode(typ, id, sid, time.Now(), map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	testutil.Success(t, err)
	return b
}

// TestMailbox_halfWrittenRace: an engine that marks a file before its
// JSON is complete (a racing writer) is given a grace period.
func TestMailbox_halfWrittenRace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		sid := e.hello()["sessionId"].(string)
		id := wire.NewID()
		full := mustEncode(t, "capacity.update", id, sid)
		e.last = max(time.Now().UnixMilli(), e.last+1)
		stem := mbx.Stem(e.last, id)
		name := filepath.Join(dir, mbx.FromEngine, stem+".json")
		testutil.Success(t, os.WriteFile(name, full[:len(full)/2], 0o644))
		testutil.Success(t, os.WriteFile(filepath.Join(dir, mbx.FromEngine, stem+".ready"), nil, 0o644))
		time.Sleep(40 * time.Millisecond) // fake time: the polls of 40 ms
		synctest.Wait()
		testutil.Equal(t, "half file not taken", countAcks(e.gameMessages(), id), 0)
		testutil.Success(t, os.WriteFile(name, full, 0o644))
		e.waitGame(ackOf(id))
	})
}

func TestMailbox_crashLeftovers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		out := filepath.Join(dir, mbx.ToEngine)
		testutil.Success(t, os.MkdirAll(out, 0o755))
		future := time.Now().Add(time.Hour).UnixMilli()
		marked := mbx.Stem(future, "marked")
		unmarked := mbx.Stem(future-1, "unmarked")
		testutil.Success(t, os.WriteFile(filepath.Join(out, marked+".json"), []byte("{}"), 0o644))
		testutil.Success(t, os.WriteFile(filepath.Join(out, marked+".ready"), nil, 0o644))
		testutil.Success(t, os.WriteFile(filepath.Join(out, unmarked+".json"), []byte(`{"half`), 0o644))
		testutil.Success(t, os.WriteFile(filepath.Join(out, mbx.TempPrefix+"x.json"), []byte(`{"half`), 0o644))
		l := newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		e.hello()
		_, err := os.Stat(filepath.Join(out, unmarked+".json"))
		testutil.ErrorIs(t, err, os.ErrNotExist)
		_, err = os.Stat(filepath.Join(out, mbx.TempPrefix+"x.json"))
		testutil.ErrorIs(t, err, os.ErrNotExist)
		// A marked message of the dead process is not left for a new engine
		// session to process.
		_, err = os.Stat(filepath.Join(out, marked+".json"))
		testutil.ErrorIs(t, err, os.ErrNotExist)
		// Stems continue after the newest one that was present.
		for _, m := range e.gameMessages() {
			if s := m["_stem"].(string); s != marked && s <= marked {
				t.Errorf("stem %s not after %s", s, marked)
			}
		}
		l.log.waitFor(t, "left by a crash")
	})
}

func TestMailbox_writeFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, &rpengine.ServerOptions{AckTimeout: -1}, dir)
		e := newRawEngine(t, dir)
		sid := e.hello()["sessionId"].(string)
		ctx := ctxT(t)
		// The outbox becomes unwritable (as on a full disk): the request
		// fails at once with an error naming the file, nothing partial stays.
		out := filepath.Join(dir, mbx.ToEngine)
		testutil.Success(t, os.Rename(out, out+".away"))
		testutil.Success(t, os.WriteFile(out, nil, 0o644))
		_, err := l.srv.Reply(ctx, textReq(testCard(t), "hi"))
		var me *fs.PathError
		if err == nil || !strings.Contains(err.Error(), "mailbox write "+out) {
			t.Fatalf("error %v does not name the mailbox file", err)
		}
		testutil.ErrorAs(t, err, &me)
		testutil.Equal(t, "op", me.Op, "write")
		testutil.ErrorIs(t, err, rpengine.ErrConnectionLost)
		// An engine message arriving meanwhile is acked once writing works
		// again: the failed ack is retried, not lost.
		id, _ := e.send("capacity.update", sid, map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
		// Its ack is tried before it is processed: once processed, the ack
		// has failed and waits for a retry.
		for c, _ := l.srv.Capacity(); !c.Known; c, _ = l.srv.Capacity() {
			time.Sleep(time.Millisecond)
		}
		testutil.Success(t, os.Remove(out))
		testutil.Success(t, os.Rename(out+".away", out))
		e.waitGame(ackOf(id))
		e.reply(ctx, l.srv, sid, textReq(testCard(t), "hi again"))
	})
}

func TestMailbox_folderDeleted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, nil)
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, textReq(testCard(t), "before"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
		eng.Close()
		trash, moved := moveAway(t, dir)
		if !moved {
			// What the game does not watch first, so that it sets the
			// folder up again only once all of it is gone.
			for _, name := range []string{mbx.ManifestName, mbx.AudioDir, mbx.ToEngine, mbx.FromEngine} {
				testutil.Success(t, testutil.RemoveAll(filepath.Join(dir, name)))
			}
		}
		l.log.waitFor(t, "mailbox folder was removed")
		ctx = ctxT(t)
		for i := 0; i < 2000; i++ {
			if _, ok := l.srv.Session(); !ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_, ok := l.srv.Session()
		testutil.Equal(t, "session ended", ok, false)
		waitFile(t, filepath.Join(dir, "audio", mbx.SlotName(31)))
		if moved {
			// The bin is emptied: the game, serving the new folder, writes
			// nothing more into the old one. (Until it noticed the move, at
			// its next poll, it could: its handle follows the folder, and
			// acks of the engine's last messages went there.)
			testutil.Success(t, testutil.RemoveAll(trash))
		}
		eng2 := l.dialMailbox(t, nil)
		r, err = l.srv.Reply(ctx, textReq(testCard(t), "after"))
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		if err != nil {
			t.Log(l.log.String())
		}
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: after")
		testutil.Equal(t, "snapshot in the new session", cardModes(eng2), []string{"snapshot"})
	})
}

// moveAway moves the served folder dir into a new folder beside it (the
// trash it returns), as deleting it to a recycle bin does: a move is one
// step, where removing file by file would race with the game recreating
// it. The caller empties the trash only once the game has noticed: until
// its next poll the game may still write into the moved folder through
// its handle (acks of engine messages it read there), as it would into a
// recycle bin, so removing it at once fails now and then with "directory
// not empty". Where a folder that another handle holds open cannot be
// moved (wine refuses while the game serves it), it says so and returns
// false.
func moveAway(t *testing.T, dir string) (trash string, moved bool) {
	t.Helper()
	trash, err := os.MkdirTemp(filepath.Dir(dir), "trash-")
	testutil.Success(t, err)
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Rename(dir, filepath.Join(trash, filepath.Base(dir)))
		if err == nil {
			return trash, true
		}
		if runtime.GOOS == "windows" && time.Now().After(deadline) {
			t.Logf("a served folder cannot be moved here (%v): its contents are removed instead", err)
			return "", false
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMailbox_subfolderDeleted: a mailbox folder emptied of its visible
// folders (the hidden lock file stays) is set up again; the server does
// not mistake its own lock for another process's.
func TestMailbox_subfolderDeleted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		l.dialMailbox(t, nil).Close()
		testutil.Success(t, testutil.RemoveAll(filepath.Join(dir, mbx.FromEngine)))
		l.log.waitFor(t, "mailbox folder was removed")
		waitFile(t, filepath.Join(dir, mbx.FromEngine))
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "again"))
		testutil.Success(t, err)
		res, err := r.Wait(ctxT(t))
		testutil.Success(t, err)
		testutil.Equal(t, "text", res.Text, "I hear you. You said: again")
		eng.Close()
	})
}

// TestMailbox_recreateFails: a folder that cannot be set up again (here a
// file stands in its place) is retried at each poll, logged once, and
// served again once it can be.
func TestMailbox_recreateFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		l.dialMailbox(t, nil).Close()
		blocker := dir
		var trashes []string
		if trash, moved := moveAway(t, dir); moved {
			trashes = append(trashes, trash)
			// The game may recreate it before the file goes in: again.
			for os.WriteFile(dir, nil, 0o644) != nil {
				if trash, moved = moveAway(t, dir); moved {
					trashes = append(trashes, trash)
				}
			}
		} else {
			// The folder stays: its audio folder becomes a file, then the
			// game is made to set the folder up again.
			blocker = filepath.Join(dir, mbx.AudioDir)
			testutil.Success(t, testutil.RemoveAll(blocker))
			testutil.Success(t, os.WriteFile(blocker, nil, 0o644))
			testutil.Success(t, testutil.RemoveAll(filepath.Join(dir, mbx.FromEngine)))
		}
		l.log.waitFor(t, "not a folder")
		// The game let go of the moved folders before it tried to set
		// dir up again (moveAway): the trash can be emptied.
		for _, trash := range trashes {
			testutil.Success(t, testutil.RemoveAll(trash))
		}
		before := l.log.String()
		time.Sleep(50 * time.Millisecond) // fake time: 10 idle polls
		synctest.Wait()
		testutil.Equal(t, "nothing more logged while it fails the same way", l.log.String(), before)
		testutil.Success(t, os.Remove(blocker))
		l.log.waitFor(t, "mailbox recreated")
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "back"))
		testutil.Success(t, err)
		_, err = r.Wait(ctxT(t))
		testutil.Success(t, err)
		eng.Close()
	})
}

func TestMailbox_lock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		waitFile(t, filepath.Join(dir, rpengine.MailboxLockName))
		// A second game process on the same folder refuses, clearly.
		srv2, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: testMailboxOptions(dir)})
		testutil.Success(t, err)
		err = srv2.Start() // Issue #17: refused at once
		testutil.ErrorIs(t, err, rpengine.ErrMailboxLocked)
		if !strings.Contains(err.Error(), "pid") {
			t.Errorf("error does not say who holds it: %v", err)
		}
		testutil.Success(t, srv2.Close())
		// The holder is unaffected.
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "still here"))
		testutil.Success(t, err)
		_, err = r.Wait(ctxT(t))
		testutil.Success(t, err)
		eng.Close()
		// Close releases the lock.
		testutil.Success(t, l.srv.Close())
		_, err = os.Stat(filepath.Join(dir, rpengine.MailboxLockName))
		testutil.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestMailbox_staleLockTakenOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		testutil.Success(t, os.Mkdir(dir, 0o755))
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		testutil.Success(t, os.WriteFile(lock, []byte(`{"pid":999999,"host":"crashed","token":"old"}`), 0o644))
		old := time.Now().Add(-time.Hour)
		testutil.Success(t, os.Chtimes(lock, old, old))
		l := newMailboxServer(t, nil, dir)
		l.dialMailbox(t, nil)
		b, err := os.ReadFile(lock)
		testutil.Success(t, err)
		if bytes.Contains(b, []byte(`"old"`)) {
			t.Fatalf("stale lock not replaced: %s", b)
		}
		l.log.waitFor(t, "took over a stale mailbox lock")
	})
}

// TestMailbox_lockHeartbeat: a live holder refreshes its lock, so a
// second process still refuses after LockStale has passed. The lock is
// aged by hand instead of waiting (no timing in the assertion).
func TestMailbox_lockHeartbeat(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		o := testMailboxOptions(dir) // LockStale 2 s: a heartbeat every 500 ms
		newMailboxServer(t, &rpengine.ServerOptions{Mailbox: o}, dir)
		waitFile(t, filepath.Join(dir, "manifest.json"))
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		old := time.Now().Add(-time.Hour)
		testutil.Success(t, os.Chtimes(lock, old, old))
		for i := 0; ; i++ {
			fi, err := os.Stat(lock)
			testutil.Success(t, err)
			if fi.ModTime().After(old.Add(time.Minute)) {
				break
			}
			if i == 10000 {
				t.Fatal("the holder never refreshed its lock")
			}
			time.Sleep(time.Millisecond)
		}
		srv2, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
		testutil.Success(t, err)
		testutil.ErrorIs(t, srv2.Start(), rpengine.ErrMailboxLocked)
		testutil.Success(t, srv2.Close())
	})
}

// TestMailbox_lockKeptDuringSetup: the lock is fresh when serving starts,
// however long writing the slots took. The lock file is written before
// them, and a setup slower than LockStale (here aged by hand at the first
// slot, instead of waiting) left a live holder's lock stale: a second
// process took the folder over (the demo's TestMailbox_InUse, now and
// then, with 2048 slots on a loaded machine).
func TestMailbox_lockKeptDuringSetup(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		o := testMailboxOptions(dir)
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
		testutil.Success(t, err)
		rpengine.OnMailboxSlot(srv, func(slot int) {
			if slot == 0 {
				old := time.Now().Add(-time.Hour)
				testutil.Success(t, os.Chtimes(lock, old, old))
			}
		})
		testutil.Success(t, srv.Start())
		t.Cleanup(func() { testutil.Success(t, srv.Close()) })
		srv2, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
		testutil.Success(t, err)
		t.Cleanup(func() { testutil.Success(t, srv2.Close()) })
		testutil.ErrorIs(t, srv2.Start(), rpengine.ErrMailboxLocked)
	})
}

// TestMailbox_lockStolen: a process that finds its lock taken over (it was
// suspended past LockStale) stops serving rather than share the folder.
func TestMailbox_lockStolen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		opts := testMailboxOptions(dir)
		opts.LockStale = 40 * time.Millisecond
		lb := &logBuf{}
		stopped := make(chan error, 1)
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.NewTextHandler(lb, nil)), Mailbox: opts,
			OnStop: func(err error) { stopped <- err }})
		testutil.Success(t, err)
		testutil.Success(t, srv.Start()) // setup done, lock written
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		testutil.Success(t, os.WriteFile(lock, []byte(`{"pid":1,"host":"other","token":"thief"}`), 0o644))
		select {
		case err := <-stopped: // Issue #17: the game learns why, Start having returned
			testutil.ErrorIs(t, err, rpengine.ErrMailboxLocked)
		case <-time.After(10 * time.Second):
			t.Fatal("still serving a folder whose lock was taken")
		}
		lb.waitFor(t, "rpengine: stopped serving the mailbox")
		testutil.Success(t, srv.Close())
	})
}

func TestMailbox_config(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for _, o := range []*rpengine.MailboxOptions{
			{IntegrationID: "g"},
			{Dir: "x"},
			{Dir: "x", IntegrationID: "g", SlotCount: 10001},
			{Dir: "x", IntegrationID: "g", IdlePoll: time.Second, LockStale: 3 * time.Second},
			{Dir: "x", IntegrationID: "g", LockStale: -time.Second},
		} {
			_, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: o})
			var ce *rpengine.ConfigError
			testutil.ErrorAs(t, err, &ce)
		}
		// A symlink as the folder is refused, not followed.
		base := testutil.TempDir(t)
		testutil.Success(t, os.Mkdir(filepath.Join(base, "real"), 0o755))
		if !testutil.Symlink(t, filepath.Join(base, "real"), filepath.Join(base, "link")) {
			return
		}
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger(), Mailbox: testMailboxOptions(filepath.Join(base, "link"))})
		testutil.Success(t, err)
		err = srv.Start()
		var me *fs.PathError
		testutil.ErrorAs(t, err, &me)
		testutil.Equal(t, "op", me.Op, "setup")
		entries, _ := os.ReadDir(filepath.Join(base, "real"))
		testutil.Equal(t, "nothing written through the link", len(entries), 0)
		testutil.Success(t, srv.Close())
	})
}

func TestMailbox_pathTraversal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		base := testutil.TempDir(t)
		dir := filepath.Join(base, "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, &enginetest.Options{Faults: enginetest.Faults{Silent: true}})
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, audioReq(testCard(t), "hi"))
		testutil.Success(t, err)
		if _, err := eng.WaitType(ctx, "reply.request"); err != nil {
			t.Fatal(err)
		}
		voice := enginetest.Synthesize(0, 0.1)
		wav := mbx.EncodeWAV(voice, 44100, 1)
		outside := filepath.Join(base, "outside.wav")
		testutil.Success(t, os.WriteFile(outside, wav, 0o644))
		// Slot 3 becomes a symlink out of the folder, slot 4 one inside it
		// (to a valid WAV). Slots 0, 1 and 5 hold a valid WAV, so that each
		// bad segment below is refused for the one reason it tests, not for
		// a byteLength that happens to disagree with a placeholder.
		slot := func(i int) string { return filepath.Join(dir, "audio", mbx.SlotName(i)) }
		for _, i := range []int{0, 1, 5} {
			testutil.Success(t, os.WriteFile(slot(i), wav, 0o644))
		}
		testutil.Success(t, os.Remove(slot(3)))
		testutil.Success(t, os.Remove(slot(4)))
		links := testutil.Symlink(t, outside, slot(3)) &&
			testutil.Symlink(t, mbx.SlotName(5), slot(4)) // relative: os.Root alone would follow it
		// Slot 6 becomes a hard link to the file outside (issue #16: it was
		// read): a regular file, but one it shares with another folder.
		testutil.Success(t, os.Remove(slot(6)))
		testutil.Success(t, os.Link(outside, slot(6)))
		peer := eng.PeerInstanceID()
		seg := func(seq, slotIndex int, path string) map[string]any {
			return map[string]any{"requestId": r.RequestID(), "segmentSequence": seq, "spokenText": "Hi.", "slotIndex": slotIndex,
				"path": path, "format": "wav_pcm_s16le", "sampleRate": 44100, "channels": 1, "durationSeconds": 0.1,
				"byteLength": len(wav), "peerInstanceId": peer}
		}
		with := func(f map[string]any, k string, v any) map[string]any { f[k] = v; return f }
		bad := []struct {
			fields map[string]any
			reason string // in the anomaly's detail
		}{
			{seg(0, 0, "../outside.wav"), "is not slot 0"},
			{seg(0, 0, "audio/../manifest.json"), "is not slot 0"},
			{seg(0, 0, outside), "is not slot 0"},
			{seg(0, 0, "audio/slot_0001.wav"), "is not slot 0"},
			{seg(0, 0, `audio\slot_0000.wav`), "is not slot 0"},
			{seg(0, 3, "audio/slot_0003.wav"), "not a regular file"}, // symlink out
			{seg(0, 4, "audio/slot_0004.wav"), "not a regular file"}, // symlink in
			{seg(0, 6, "audio/slot_0006.wav"), "other hard links"},   // Issue #16
			{seg(0, 9999, "audio/slot_9999.wav"), "slotIndex"},
			{with(seg(0, 5, "audio/slot_0005.wav"), "sampleRate", 48000), "sampleRate 48000"},
			{with(seg(0, 5, "audio/slot_0005.wav"), "byteLength", 12), "byteLength says 12"},
			{with(seg(0, 5, "audio/slot_0005.wav"), "channels", 2), "channels 2"},
			{with(seg(0, 5, "audio/slot_0005.wav"), "format", "wav_pcm_f32le"), "format"},
			{with(seg(0, 5, "audio/slot_0005.wav"), "peerInstanceId", "someone-else"), "peerInstanceId"},
		}
		if !links { // no symlinks on this Windows: the slots are simply missing
			bad = slices.DeleteFunc(bad, func(b struct {
				fields map[string]any
				reason string
			}) bool {
				return b.reason == "not a regular file"
			})
		}
		for _, b := range bad {
			_, err := eng.Send(ctx, "reply.audio.segment", b.fields)
			testutil.Success(t, err)
		}
		_, err = eng.Send(ctx, "reply.audio.segment", seg(0, 5, "audio/slot_0005.wav"))
		testutil.Success(t, err)
		var anomalies []string
		for {
			ev, err := r.Next(ctx)
			testutil.Success(t, err)
			if ev.Kind == rpengine.EventAnomaly {
				anomalies = append(anomalies, ev.Anomaly.Detail)
				continue
			}
			testutil.Equal(t, "then the valid segment", ev.Kind, rpengine.EventSegment)
			testutil.Equal(t, "samples", len(ev.Segment.Samples), len(voice)/2)
			break
		}
		testutil.Equal(t, "every bad segment refused", len(anomalies), len(bad))
		for i, a := range anomalies {
			if !strings.Contains(a, "refused reply.audio.segment") || !strings.Contains(a, bad[i].reason) {
				t.Errorf("anomaly %d: %q, want the reason %q", i, a, bad[i].reason)
			}
		}
		// Issue #31: every segment naming a slot of this game's is given
		// back, a refused one too (the engine puts the silent placeholder
		// back); one naming no slot of ours (slot 9999, another
		// peerInstanceId) is not.
		var want []int
		for _, b := range append(bad, struct {
			fields map[string]any
			reason string
		}{seg(0, 5, "audio/slot_0005.wav"), ""}) {
			if i := b.fields["slotIndex"].(int); i < 32 && b.fields["peerInstanceId"] == peer {
				want = append(want, i)
			}
		}
		slices.Sort(want)
		var used []int
		for deadline := time.Now().Add(waitBound); len(used) < len(want) && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			used = used[:0]
			for _, m := range eng.Received() {
				var u struct{ SlotIndex int }
				if m.Type == "reply.audio.segment.consumed" && json.Unmarshal(m.Raw, &u) == nil {
					used = append(used, u.SlotIndex)
				}
			}
		}
		slices.Sort(used)
		testutil.Equal(t, "the slots given back", used, want)
		got, err := os.ReadFile(outside)
		testutil.Success(t, err)
		testutil.Equal(t, "outside file untouched", bytes.Equal(got, wav), true)
		testutil.Success(t, r.Cancel(ctx))
	})
}

// TestMailbox_longRun: files are consumed and removed on both sides, the
// slots go back to silence, and the folder does not grow.
func TestMailbox_longRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, &enginetest.Options{SecondsPerSentence: 0.05})
		ctx := ctxT(t)
		c := testCard(t)
		count := func() int {
			n := 0
			for _, d := range []string{mbx.ToEngine, mbx.FromEngine} {
				es, err := os.ReadDir(filepath.Join(dir, d))
				testutil.Success(t, err)
				n += len(es)
			}
			return n
		}
		peak := 0
		const rounds = 12
		for i := range rounds {
			r, err := l.srv.Reply(ctx, audioReq(c, "round "+string(rune('a'+i))))
			testutil.Success(t, err)
			segs := 0
			for _, ev := range collect(t, r) {
				if ev.Kind == rpengine.EventSegment {
					segs++
				}
			}
			testutil.Equal(t, "segments", segs, 2)
			peak = max(peak, count())
		}
		t.Logf("peak mailbox files during %d replies: %d", rounds, peak)
		if peak > 120 {
			t.Errorf("mailbox grew to %d files", peak)
		}
		// Quiet: everything is read, acked and removed (the engine's own acks
		// after AckLinger). Fake time: a second of polls, then quiescence.
		time.Sleep(time.Second)
		synctest.Wait()
		testutil.Equal(t, "mailbox empty when quiet", count(), 0)
		silent := mbx.Silent(44100)
		for i := range 2 * rounds {
			b, err := os.ReadFile(filepath.Join(dir, "audio", mbx.SlotName(i)))
			testutil.Success(t, err)
			testutil.Equal(t, "slot restored "+mbx.SlotName(i), bytes.Equal(b, silent), true)
		}
		_ = eng
	})
}

// TestMailbox_nextAudioSlot: a new engine session of the same game process
// is told which slot comes next, so slots are never reused.
func TestMailbox_nextAudioSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, nil)
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, audioReq(testCard(t), "one"))
		testutil.Success(t, err)
		collect(t, r)
		peer := eng.PeerInstanceID()
		eng.Close()
		e := newRawEngine(t, dir)
		w := e.hello()
		testutil.Equal(t, "nextAudioSlot", w["nextAudioSlot"], 2.0)
		testutil.Equal(t, "same peer", w["peerInstanceId"], any(peer))
		_ = context.Background
	})
}

// TestMailbox_newHelloDropsUnread: what the game wrote for an engine
// session that is gone is not processed by the next one.
func TestMailbox_newHelloDropsUnread(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, &rpengine.ServerOptions{AckTimeout: -1}, dir)
		e := newRawEngine(t, dir)
		e.hello()
		ctx := ctxT(t)
		// Reply returns at the engine's decision (issue #15); this engine
		// never decides, so the request ends with the session.
		got := make(chan *rpengine.Reply, 1)
		go func() {
			r, err := l.srv.Reply(ctx, textReq(testCard(t), "never read"))
			if err != nil {
				t.Errorf("Reply: %v", err)
			}
			got <- r
		}()
		e.waitGame(func(m map[string]any) bool { return m["type"] == "reply.request" })
		id, _ := e.send("hello", "", map[string]string{"clientVersion": "raw2"})
		e.waitGame(ackOf(id))
		r := <-got
		for _, m := range e.gameMessages() {
			if m["type"] == "reply.request" {
				t.Fatal("the old session's request is still there")
			}
		}
		_, err := r.Wait(ctx)
		testutil.ErrorIs(t, err, rpengine.ErrConnectionLost)
		l.log.waitFor(t, "removed unread mailbox messages of the previous engine session")
	})
}

// TestMailbox_orphanSegmentConsumed: a segment of a reply that already
// ended is still answered, so its slot goes back to silence.
func TestMailbox_orphanSegmentConsumed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, nil)
		ctx := ctxT(t)
		wav := mbx.EncodeWAV(enginetest.Synthesize(1, 0.1), 44100, 1)
		slot := filepath.Join(dir, "audio", mbx.SlotName(6))
		testutil.Success(t, os.WriteFile(slot, wav, 0o644))
		_, err := eng.Send(ctx, "reply.audio.segment", map[string]any{"requestId": "gone", "segmentSequence": 3, "spokenText": "Late.",
			"slotIndex": 6, "path": "audio/slot_0006.wav", "format": "wav_pcm_s16le", "sampleRate": 44100, "channels": 1,
			"durationSeconds": 0.1, "byteLength": len(wav), "peerInstanceId": eng.PeerInstanceID()})
		testutil.Success(t, err)
		msg, err := eng.WaitType(ctx, "reply.audio.segment.consumed")
		testutil.Success(t, err)
		var used struct {
			RequestID       string
			SegmentSequence int
			SlotIndex       int
		}
		testutil.Success(t, json.Unmarshal(msg.Raw, &used))
		testutil.Equal(t, "consumed", used, struct {
			RequestID       string
			SegmentSequence int
			SlotIndex       int
		}{"gone", 3, 6})
		for i := 0; i < 2000; i++ {
			if b, _ := os.ReadFile(slot); bytes.Equal(b, mbx.Silent(44100)) {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatal("slot not restored")
	})
}

// TestMailbox_crashedHolderOnThisMachine: a fresh lock whose process is
// gone (a game that crashed and is restarted at once) is taken over
// without waiting for the heartbeat to go stale.
func TestMailbox_crashedHolderOnThisMachine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A process that has exited: this test binary, run for nothing. Under
		// qemu-user without binfmt_misc it cannot start itself (an arm64
		// binary on an amd64 kernel); any native program's PID does as well.
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		if err := cmd.Run(); err != nil {
			t.Logf("running %s: %v; a native program instead", os.Args[0], err)
			cmd = exec.Command("true")
			testutil.Success(t, cmd.Run())
		}
		host, _ := os.Hostname()
		dir := filepath.Join(testutil.TempDir(t), "mb")
		testutil.Success(t, os.Mkdir(dir, 0o755))
		lock := filepath.Join(dir, rpengine.MailboxLockName)
		info, _ := json.Marshal(map[string]any{"pid": cmd.Process.Pid, "host": host, "token": "crashed"})
		testutil.Success(t, os.WriteFile(lock, info, 0o644))
		o := testMailboxOptions(dir)
		o.LockStale = time.Hour
		l := newMailboxServer(t, &rpengine.ServerOptions{Mailbox: o}, dir)
		l.dialMailbox(t, nil)
		l.log.waitFor(t, "processGone=true")
	})
}

// TestMailbox_slotsExhausted: slots are never reused within one game
// process; when they run out the engine reports it and the reply fails
// with that code.
func TestMailbox_slotsExhausted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		o := testMailboxOptions(dir)
		o.SlotCount = 3
		l := newMailboxServer(t, &rpengine.ServerOptions{Mailbox: o}, dir)
		l.dialMailbox(t, nil)
		ctx := ctxT(t)
		c := testCard(t)
		r, err := l.srv.Reply(ctx, audioReq(c, "one"))
		testutil.Success(t, err)
		_, err = r.Wait(ctx)
		testutil.Success(t, err)
		r, err = l.srv.Reply(ctx, audioReq(c, "two"))
		testutil.Success(t, err)
		segs := 0
		for _, ev := range collect(t, r) {
			if ev.Kind == rpengine.EventSegment {
				segs++
			}
		}
		testutil.Equal(t, "the last slot was used", segs, 1)
		_, err = r.Wait(ctx)
		var re *rpengine.RequestError
		testutil.ErrorAs(t, err, &re)
		testutil.Equal(t, "code", re.Code, "audio_slots_exhausted")
	})
}
