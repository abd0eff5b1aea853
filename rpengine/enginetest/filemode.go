package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/errd"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// File-mode timing of upstream's adapter (docs/rpengine-protocol.md, File transport).
const (
	TextDeltaBatch = 120 * time.Millisecond // reply.text.delta merged per request
	LevelBatch     = 250 * time.Millisecond // newest voice.capture.level kept per request
)

// MailboxOptions configures the file-mode side of an Engine made by
// DialMailbox. Zero fields take the defaults stated on each.
type MailboxOptions struct {
	// Poll is how often the engine looks for the game's files. If zero,
	// 50 ms (upstream's active interval). Tests use a few milliseconds.
	Poll time.Duration
	// AckLinger is how long the engine's own acks stay in the folder
	// before it removes them (they are never acked). If zero, 2 s (as
	// upstream).
	AckLinger time.Duration
}

// fileEngine is the mailbox configuration of a file-mode Engine.
type fileEngine struct {
	dir  string
	poll time.Duration
	ack  time.Duration
}

// DialMailbox is Dial over the file mailbox (docs/rpengine-protocol.md)
// instead of WebSocket: it opens the game's mailbox folder dir as a
// player selects it (waiting, bounded by ctx, for the folder to exist,
// then reading its manifest once: a folder without one is an error, as
// in the engine's page), writes hello into engine-to-integration and
// waits for welcome. The engine then does the
// engine's side of file mode:
// it reads and removes the game's files, writes its own (temporary name,
// rename, .ready marker), removes them once the game acks them (its own
// acks after AckLinger), merges text deltas within 120 ms, keeps only the
// newest level sample per 250 ms, writes each spoken sentence as a WAV
// into the next audio slot with reply.audio.segment (reply.audio.completed
// then carries the WebSocket totals), and restores the silent placeholder
// on reply.audio.segment.consumed. Faults, Send,
// Reconnect and the rest work as over WebSocket. Nothing outside dir is
// touched (every access goes through os.Root).
func DialMailbox(ctx context.Context, dir string, opts *Options, fopts *MailboxOptions) (_ *Engine, err error) {
	defer errd.Wrap(&err, "enginetest: dial mailbox")
	fe := &fileEngine{dir: dir, poll: 50 * time.Millisecond, ack: 2 * time.Second}
	if fopts != nil {
		if fopts.Poll > 0 {
			fe.poll = fopts.Poll
		}
		if fopts.AckLinger > 0 {
			fe.ack = fopts.AckLinger
		}
	}
	e := &Engine{opts: opts.withDefaults(), url: dir, file: fe, changed: make(chan struct{})}
	e.faults = e.opts.Faults
	if err := e.connect(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// fileLink is one file-mode connection: the engine's writer and reader
// of the mailbox.
type fileLink struct {
	e      *Engine
	root   *os.Root
	slots  int
	poll   time.Duration
	linger time.Duration

	pollMu sync.Mutex // one poll of the game's folder at a time (readLoop, LooseEnds)

	mu       sync.Mutex // guards following; held across a publish so files keep their order
	cn       *conn
	closed   bool
	last     int64
	lastID   string              // messageId of the last message given to send
	outgoing map[string]sentFile // messageId -> its file, until the game acks it
	speaking map[int]bool        // slots announced by reply.audio.segment, until consumed
	acks     []lingering
	deltas   map[string]*pendingDelta
	batch    map[string]int // next merged sequence per request
	levels   map[string]*pendingLevel
	peer     string
	next     int // next audio slot
}

// sentFile is one of the engine's messages in engine-to-integration.
type sentFile struct{ stem, typ string }

type lingering struct {
	stem string
	at   time.Time
}

type pendingDelta struct {
	payload map[string]any
	delta   string
	timer   *time.Timer
}

type pendingLevel struct {
	msg   []byte
	timer *time.Timer
}

func (e *Engine) connectFile(ctx context.Context) error {
	fe := e.file
	root, man, err := openMailbox(ctx, fe)
	if err != nil {
		return err
	}
	f := &fileLink{e: e, root: root, slots: man.Audio.SlotCount, poll: fe.poll, linger: fe.ack,
		outgoing: map[string]sentFile{}, speaking: map[int]bool{}, deltas: map[string]*pendingDelta{}, batch: map[string]int{}, levels: map[string]*pendingLevel{}}
	f.last = latestStem(root)
	helloID := wire.NewID()
	hello, _ := wire.Encode(wire.TypeHello, helloID, "", time.Now(), map[string]string{"clientVersion": e.opts.ClientVersion})
	f.mu.Lock()
	err = f.publishLocked(hello, wire.TypeHello, helloID)
	f.mu.Unlock()
	if err != nil {
		root.Close()
		return err
	}
	sessionID, err := f.awaitWelcome(ctx)
	if err != nil {
		root.Close()
		return err
	}
	cn := e.newConn(sessionID)
	cn.fm = f
	f.mu.Lock()
	f.cn = cn
	f.mu.Unlock()
	return e.startConn(cn, func() { f.readLoop(cn) }, f.closeNow)
}

// openMailbox opens the game's folder as the player selects it: it waits,
// bounded by ctx, for the folder to exist (a player can only pick a
// folder that exists), then reads and checks the manifest once. The
// engine's page does not wait for a manifest: it reads it once, when the
// player selects the folder (and at each reconnect), and if it is missing
// or unusable shows an error and never retries (docs/rpengine-protocol.md,
// "File transport"; issue #33: a folder selected while the game was
// still writing its slots, before the manifest, left the player stuck).
func openMailbox(ctx context.Context, fe *fileEngine) (*os.Root, mbx.Manifest, error) {
	var man mbx.Manifest
	for {
		_, err := os.Lstat(fe.dir)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, man, fmt.Errorf("waiting for the mailbox folder: %w (last: %v)", ctx.Err(), err)
		case <-time.After(fe.poll):
		}
	}
	// On Windows the folder cannot be opened for the moment the game
	// renames it into place (a sharing violation, seen under wine): a
	// player's folder picker cannot hit that moment, a fake polling every
	// millisecond can, so it is retried briefly.
	root, err := mbx.OpenRoot(fe.dir)
	if err != nil {
		return nil, man, err
	}
	b, err := mbx.ReadRegular(root, mbx.ManifestName, 1<<20)
	if err == nil {
		err = json.Unmarshal(b, &man)
	}
	if err == nil && (man.Schema != mbx.Schema || man.Version != mbx.Version || man.Audio.Format != mbx.AudioFormat ||
		man.Audio.Channels != 1 || man.Audio.SlotCount < 1 || man.Mailboxes.IntegrationToEngine != mbx.ToEngine ||
		man.Mailboxes.EngineToIntegration != mbx.FromEngine || man.Audio.Directory != mbx.AudioDir || man.IntegrationID == "") {
		err = fmt.Errorf("unsupported manifest: %s", b)
	}
	// The page then opens the three folders the manifest names, and fails
	// the same way when one is missing.
	for _, d := range []string{mbx.ToEngine, mbx.FromEngine, mbx.AudioDir} {
		if err == nil {
			var fi os.FileInfo
			if fi, err = root.Stat(d); err == nil && !fi.IsDir() {
				err = fmt.Errorf("%s is not a folder", d)
			}
		}
	}
	if err != nil {
		root.Close()
		return nil, man, fmt.Errorf("the mailbox folder as selected: %w", err)
	}
	return root, man, nil
}

// latestStem returns the newest stem time of the engine's folder, so that
// stems keep increasing across reconnects.
func latestStem(root *os.Root) int64 {
	_, names, _ := mbx.List(root, mbx.FromEngine)
	var last int64
	for n := range names {
		if ms, _, ok := mbx.ParseStem(n[:max(0, len(n)-len(mbx.JSONSuffix))]); ok {
			last = max(last, ms)
		}
	}
	return last
}

// awaitWelcome reads the game's files until welcome, acking it (without
// a sessionId, as the engine does).
func (f *fileLink) awaitWelcome(ctx context.Context) (string, error) {
	for {
		ready, _, err := mbx.List(f.root, mbx.ToEngine)
		if err != nil {
			return "", err
		}
		for _, e := range ready {
			data, err := f.take(e.Stem)
			if err != nil {
				continue
			}
			h, err := wire.DecodeHeader(data)
			if err != nil {
				return "", fmt.Errorf("bad message before welcome: %w", err)
			}
			switch h.Type {
			case wire.TypeAck:
				f.acked(data)
			case wire.TypeWelcome:
				var w struct {
					SessionID      string `json:"sessionId"`
					ServerVersion  string `json:"serverVersion"`
					PeerInstanceID string `json:"peerInstanceId"`
					NextAudioSlot  *int   `json:"nextAudioSlot"`
				}
				if err := json.Unmarshal(data, &w); err != nil || w.SessionID == "" || w.ServerVersion == "" || w.PeerInstanceID == "" || w.NextAudioSlot == nil {
					return "", fmt.Errorf("bad file-mode welcome (needs sessionId, serverVersion, peerInstanceId, nextAudioSlot): %s", data)
				}
				f.mu.Lock()
				f.peer, f.next = w.PeerInstanceID, max(f.next, *w.NextAudioSlot)
				ack, _ := wire.Encode(wire.TypeAck, wire.NewID(), "", time.Now(), wire.Ack{AcknowledgedMessageID: h.MessageID})
				err := f.publishLocked(ack, wire.TypeAck, "")
				f.mu.Unlock()
				return w.SessionID, err
			default:
				// Left over from an earlier session: consumed, ignored.
				f.e.opts.Logf("enginetest: skipped %s before welcome", h.Type)
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for welcome: %w", ctx.Err())
		case <-time.After(f.poll):
		}
	}
}

// take reads and removes one of the game's messages.
func (f *fileLink) take(stem string) ([]byte, error) {
	data, err := mbx.ReadRegular(f.root, path.Join(mbx.ToEngine, stem+mbx.JSONSuffix), wire.MaxMessageBytes)
	if rerr := mbx.Remove(f.root, mbx.ToEngine, stem); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		f.e.opts.Logf("enginetest: skipped mailbox file %s: %v", stem, err)
	}
	return data, err
}

// acked removes the engine's file that an ack of the game acknowledges.
func (f *fileLink) acked(data []byte) {
	var a wire.Ack
	if json.Unmarshal(data, &a) != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if sf, ok := f.outgoing[a.AcknowledgedMessageID]; ok {
		delete(f.outgoing, a.AcknowledgedMessageID)
		_ = mbx.Remove(f.root, mbx.FromEngine, sf.stem)
	}
}

// readLoop polls the game's folder until the connection ends.
func (f *fileLink) readLoop(cn *conn) {
	defer cn.wg.Done()
	defer close(cn.done)
	defer cn.cancel()
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-t.C:
		}
		if !f.pollOnce(cn) {
			return
		}
	}
}

// pollOnce reads, removes and dispatches the game's new files; false
// means stop (the folder is gone, or the connection ended).
func (f *fileLink) pollOnce(cn *conn) bool {
	f.pollMu.Lock()
	defer f.pollMu.Unlock()
	f.expireAcks()
	ready, _, err := mbx.List(f.root, mbx.ToEngine)
	if err != nil {
		f.e.opts.Logf("enginetest: mailbox gone: %v", err)
		return false
	}
	for _, e := range ready {
		if cn.ctx.Err() != nil {
			return false
		}
		data, err := f.take(e.Stem)
		if err != nil {
			continue
		}
		if h, err := wire.DecodeHeader(data); err == nil {
			switch h.Type {
			case wire.TypeAck:
				f.acked(data)
			case "reply.audio.segment.consumed":
				f.restore(data)
			}
		}
		cn.receive(data)
	}
	return true
}

func (f *fileLink) expireAcks() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	i := 0
	for ; i < len(f.acks) && now.Sub(f.acks[i].at) >= f.linger; i++ {
		_ = mbx.Remove(f.root, mbx.FromEngine, f.acks[i].stem)
	}
	f.acks = f.acks[i:]
}

// restore puts the silent placeholder back into a consumed slot.
func (f *fileLink) restore(data []byte) {
	var m struct {
		SlotIndex *int `json:"slotIndex"`
	}
	if json.Unmarshal(data, &m) != nil || m.SlotIndex == nil || *m.SlotIndex < 0 || *m.SlotIndex >= f.slots {
		return
	}
	f.mu.Lock()
	delete(f.speaking, *m.SlotIndex)
	f.mu.Unlock()
	name := path.Join(mbx.AudioDir, mbx.SlotName(*m.SlotIndex))
	if err := mbx.ReplaceFile(f.root, name, mbx.Silent(mbx.SampleRate)); err != nil {
		f.e.opts.Logf("enginetest: restore %s: %v", name, err)
	}
}

// send publishes one engine message: text deltas are merged per request
// for up to 120 ms (contiguous renumbered sequences), levels keep only the
// newest per 250 ms, and any other message of a request first flushes its
// pending text and drops its pending level.
func (f *fileLink) send(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	typ, _ := m["type"].(string)
	id, _ := m["messageId"].(string)
	rid, _ := m["requestId"].(string)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("enginetest: mailbox connection closed")
	}
	dup := id == f.lastID
	f.lastID = id
	switch {
	case typ == wire.TypeTextDelta && rid != "":
		if !dup { // the Duplicate fault: the merged batch carries it once
			f.mergeDeltaLocked(rid, m)
		}
		return nil
	case typ == wire.TypeCaptureLevel && rid != "":
		f.keepLevelLocked(rid, b)
		return nil
	}
	if rid != "" {
		if p := f.levels[rid]; p != nil {
			p.timer.Stop()
			delete(f.levels, rid)
		}
		if err := f.flushLocked(rid); err != nil {
			return err
		}
	}
	if err := f.publishLocked(b, typ, id); err != nil {
		return err
	}
	if slot, ok := m["slotIndex"].(float64); ok && typ == "reply.audio.segment" {
		f.speaking[int(slot)] = true
	}
	return nil
}

// mergeDeltaLocked adds a text delta to its request's pending batch, which
// is published TextDeltaBatch after its first delta (or flushed sooner).
func (f *fileLink) mergeDeltaLocked(rid string, m map[string]any) {
	delta, _ := m["delta"].(string)
	if p := f.deltas[rid]; p != nil {
		p.delta += delta
		return
	}
	p := &pendingDelta{payload: m, delta: delta}
	p.timer = time.AfterFunc(TextDeltaBatch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.deltas[rid] == p {
			_ = f.flushLocked(rid)
		}
	})
	f.deltas[rid] = p
}

// keepLevelLocked keeps b as its request's newest level sample, published
// LevelBatch after the first one of the period.
func (f *fileLink) keepLevelLocked(rid string, b []byte) {
	if p := f.levels[rid]; p != nil {
		p.msg = b
		return
	}
	p := &pendingLevel{msg: b}
	p.timer = time.AfterFunc(LevelBatch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.levels[rid] == p && !f.closed {
			delete(f.levels, rid)
			lid, _ := wire.DecodeHeader(p.msg)
			_ = f.publishLocked(p.msg, wire.TypeCaptureLevel, lid.MessageID)
		}
	})
	f.levels[rid] = p
}

// flushLocked publishes a request's merged text delta, if any.
func (f *fileLink) flushLocked(rid string) error {
	p := f.deltas[rid]
	if p == nil || f.closed || f.cn == nil {
		return nil
	}
	delete(f.deltas, rid)
	p.timer.Stop()
	seq := f.batch[rid]
	f.batch[rid] = seq + 1
	id := wire.NewID()
	b, err := wire.Encode(wire.TypeTextDelta, id, f.cn.sessionID, time.Now(), map[string]any{"requestId": rid, "sequence": seq, "delta": p.delta})
	if err != nil {
		return err
	}
	return f.publishLocked(b, wire.TypeTextDelta, id)
}

// publishLocked writes one message file with a strictly increasing stem.
func (f *fileLink) publishLocked(b []byte, typ, id string) error {
	if id == "" {
		h, _ := wire.DecodeHeader(b)
		id = h.MessageID
	}
	ms := max(time.Now().UnixMilli(), f.last+1)
	stem := mbx.Stem(ms, id)
	if err := mbx.Write(f.root, mbx.FromEngine, stem, b); err != nil {
		return err
	}
	f.last = ms
	if typ == wire.TypeAck {
		f.acks = append(f.acks, lingering{stem: stem, at: time.Now()})
	} else {
		f.outgoing[id] = sentFile{stem, typ}
	}
	return nil
}

// segment writes one sentence's speech into the next audio slot and sends
// reply.audio.segment; false means stop (cancelled, disconnected, or the
// slots are exhausted, which is reported as upstream does).
func (f *fileLink) segment(j *job, seq int, spoken string, pcm []byte) bool {
	cn := f.cn
	f.mu.Lock()
	slot := f.next
	if slot >= f.slots {
		f.mu.Unlock()
		id := j.req.RequestID
		cn.fail(&id, "", "audio_slots_exhausted", fmt.Sprintf("all %d audio slots of this game process are used", f.slots))
		return false
	}
	f.next++
	peer := f.peer
	f.mu.Unlock()
	wav := mbx.EncodeWAV(pcm, SampleRate, 1)
	name := path.Join(mbx.AudioDir, mbx.SlotName(slot))
	if fi, err := f.root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		id := j.req.RequestID
		cn.fail(&id, "", "audio_transport_failed", fmt.Sprintf("slot %s is missing", name))
		return false
	}
	if err := mbx.ReplaceFile(f.root, name, wav); err != nil {
		id := j.req.RequestID
		cn.fail(&id, "", "audio_transport_failed", err.Error())
		return false
	}
	ok := cn.step(j, "reply.audio.segment", map[string]any{"segmentSequence": seq, "spokenText": spoken,
		"slotIndex": slot, "path": mbx.SlotPath(slot), "format": mbx.AudioFormat, "sampleRate": SampleRate, "channels": 1,
		"durationSeconds": float64(len(pcm)/2) / SampleRate, "byteLength": len(wav), "peerInstanceId": peer})
	if !ok {
		_ = mbx.ReplaceFile(f.root, name, mbx.Silent(SampleRate))
	}
	return ok
}

// closeNow ends the file connection: pending merged deltas and levels
// are dropped (as a browser reload would), files stay.
func (f *fileLink) closeNow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	for _, p := range f.deltas {
		p.timer.Stop()
	}
	for _, p := range f.levels {
		p.timer.Stop()
	}
	clear(f.deltas)
	clear(f.levels)
	f.root.Close()
}

// writeRaw writes one encoded message on the connection's transport.
func (cn *conn) writeRaw(ctx context.Context, b []byte) error {
	if cn.fm != nil {
		return cn.fm.send(b)
	}
	return cn.c.Write(ctx, websocket.MessageText, b)
}

// closeNow drops the connection's transport abruptly.
func (cn *conn) closeNow() {
	if cn.fm != nil {
		cn.fm.closeNow()
		return
	}
	cn.c.CloseNow()
}

// PeerInstanceID returns the peerInstanceId of the game's last file-mode
// welcome ("" over WebSocket or when disconnected).
func (e *Engine) PeerInstanceID() string {
	cn := e.current()
	if cn == nil || cn.fm == nil {
		return ""
	}
	cn.fm.mu.Lock()
	defer cn.fm.mu.Unlock()
	return cn.fm.peer
}

// LooseEnds is what a game has left unsettled in a file-mode session, as
// the engine sees it.
type LooseEnds struct {
	// Unacked are the types of the engine's messages in the folder that
	// the game has not acknowledged, oldest first (the engine's own acks
	// are never acknowledged and are not counted).
	Unacked []string
	// Unconsumed are the audio slots that reply.audio.segment announced
	// and that the game has not given back with
	// reply.audio.segment.consumed, in slot order.
	Unconsumed []int
}

// LooseEnds first reads what the game wrote since the engine's last poll
// (so that, called once the game has stopped, it sees the game's last
// acks), then reports what the game has left unsettled in the current
// file-mode session: the zero LooseEnds over WebSocket or when not
// connected. Issue #31: a game that stopped right after a reply left
// engine messages unacked and segments unconsumed.
func (e *Engine) LooseEnds() LooseEnds {
	cn := e.current()
	if cn == nil || cn.fm == nil {
		return LooseEnds{}
	}
	f := cn.fm
	if cn.ctx.Err() == nil {
		f.pollOnce(cn)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var l LooseEnds
	files := make([]sentFile, 0, len(f.outgoing))
	for _, sf := range f.outgoing {
		files = append(files, sf)
	}
	slices.SortFunc(files, func(a, b sentFile) int { return strings.Compare(a.stem, b.stem) })
	for _, sf := range files {
		l.Unacked = append(l.Unacked, sf.typ)
	}
	for slot := range f.speaking {
		l.Unconsumed = append(l.Unconsumed, slot)
	}
	slices.Sort(l.Unconsumed)
	return l
}
