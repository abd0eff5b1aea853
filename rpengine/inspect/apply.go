package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// outLocked takes a message the game sent.
func (in *Inspector) outLocked(t time.Time, m *message) {
	if m.Type != "ack" && m.MessageID != "" {
		if len(in.unacked) == maxUnacked {
			in.unacked = slices.Delete(in.unacked, 0, 1)
		}
		in.unacked = append(in.unacked, pendingOut{m.MessageID, m.RequestID})
	}
	switch m.Type {
	case "welcome":
		in.sess.ID, in.sess.ServerVersion, in.sess.State, in.sess.Started = m.SessionID, m.ServerVersion, "connected", ms(t)
		clear(in.chars) // a new session starts with the engine's cache empty
		in.emitLocked("session", in.sess)
		in.emitCharactersLocked()
	case "reply.request", "voice.capture.start":
		in.requestLocked(t, m)
	case "character.sync":
		if c, _ := in.cardLocked(t, m); c != nil {
			in.syncs[m.MessageID] = c.Key
			if len(in.syncs) > maxCharacters {
				clear(in.syncs) // a sync unanswered for this long was lost
			}
		}
	case "request.cancel", "voice.capture.stop", "voice.capture.cancel":
		if r := in.byID[m.RequestID]; r != nil {
			in.pointLocked(r, m.Type, t, "")
		}
	}
}

// requestLocked starts (or resends) a reply row.
func (in *Inspector) requestLocked(t time.Time, m *message) {
	r := in.replyLocked(m.RequestID)
	if r == nil {
		return
	}
	r.view.Kind, r.view.Character = "reply", m.IntegrationID+"/"+m.CharacterID
	if m.Type == "voice.capture.start" {
		r.view.Kind = "capture"
	}
	if _, cv := in.cardLocked(t, m); cv != nil {
		r.view.Card = cv
	}
	name := "resent" // after card_resync_required: same ids, new envelope
	if !r.sent {
		name, r.sent, r.view.Prompt = "sent", true, promptOf(m)
		in.chargeLocked(r, mapBytes(r.view.Prompt))
	}
	in.pointLocked(r, name, t, "")
}

// inLocked takes a message the engine sent: one switch over the types
// (docs/rpengine-protocol.md, "Engine to game"), hence its length.
func (in *Inspector) inLocked(t time.Time, m *message) {
	switch m.Type {
	case "hello":
		in.sess.ClientVersion, in.sess.State = m.ClientVersion, "handshake"
		in.emitLocked("session", in.sess)
		return
	case "ack":
		if i := slices.IndexFunc(in.unacked, func(p pendingOut) bool { return p.id == m.AcknowledgedMessageID }); i >= 0 {
			in.unacked = slices.Delete(in.unacked, i, i+1)
		}
		return
	case "capacity.update":
		in.capacityLocked(t, m)
		return
	case "character.synced":
		if c := in.chars[in.syncs[m.SourceMessageID]]; c != nil {
			c.Hash, c.Synced = m.TargetHash, true
			in.emitCharactersLocked()
		}
		delete(in.syncs, m.SourceMessageID)
		return
	case "request.error":
		in.errorLocked(t, m)
		return
	}
	r := in.byID[m.RequestID]
	if r == nil {
		return
	}
	switch m.Type {
	case "reply.accepted":
		detail := ""
		if m.QueueDepth != nil {
			detail = "queueDepth " + strconv.Itoa(*m.QueueDepth)
		}
		in.pointLocked(r, "accepted", t, detail)
	case "reply.text.delta":
		if !r.gotText {
			r.gotText = true
			in.pointLocked(r, "first text", t, "")
		}
		in.textLocked(r, m.Delta, false)
	case "reply.text.completed":
		r.view.TextMs = m.ElapsedMs
		in.pointLocked(r, "text completed", t, fmt.Sprintf("%d tokens", m.TokenCount))
		in.textLocked(r, m.Text, true)
	case "voice.capture.transcript":
		in.pointLocked(r, "transcript", t, "")
		in.textLocked(r, m.Text, true)
	case "voice.capture.state":
		in.pointLocked(r, "capture "+m.State, t, "")
	case "reply.audio.start":
		r.rate = m.SampleRate
	case "reply.audio.chunk":
		in.chunkLocked(r, t, m)
	case "reply.audio.segment":
		in.slotSegmentLocked(r, t, m)
	case "reply.audio.completed":
		r.view.AudioMs = m.ElapsedMs
		in.pointLocked(r, "audio completed", t, fmt.Sprintf("%d segments, %.2f s", m.SegmentCount, m.DurationSeconds))
	case "reply.completed":
		in.endLocked(r, "completed", t, "")
	case "reply.cancelled":
		in.endLocked(r, "cancelled", t, m.Reason)
	}
}

// errorLocked places a request.error: a retryable one is a point of its
// reply's timeline (the game retries), any other ends it. One naming no
// request is the engine's refusal of the oldest message not acked.
func (in *Inspector) errorLocked(t time.Time, m *message) {
	id := m.RequestID
	if id == "" && m.SourceMessageID == "" && len(in.unacked) > 0 {
		id = in.unacked[0].requestID
		in.unacked = in.unacked[1:]
	}
	text := m.Code + ": " + m.Message
	r := in.byID[id]
	if r == nil {
		in.sessionNoteLocked(t, "WARN", "engine error: "+text)
		return
	}
	if m.Retryable {
		in.pointLocked(r, "error", t, m.Code+" (retried)")
		return
	}
	in.endLocked(r, "error", t, text)
}

func (in *Inspector) endLocked(r *reply, name string, t time.Time, detail string) {
	r.view.Ended = true
	if name == "error" {
		r.view.Error = detail
	}
	in.pointLocked(r, name, t, detail)
}

func (in *Inspector) capacityLocked(t time.Time, m *message) {
	if m.QueueDepth == nil {
		return
	}
	s := capSample{T: ms(t), Depth: *m.QueueDepth, Limit: m.QueueLimit, Accepting: m.AcceptingRequests == nil || *m.AcceptingRequests}
	if len(in.caps) == maxCapSamples {
		in.caps = slices.Delete(in.caps, 0, maxCapSamples/4) // keeps the copy rare
	}
	in.caps = append(in.caps, s)
	in.sess.QueueDepth, in.sess.QueueLimit, in.sess.Accepting = s.Depth, s.Limit, s.Accepting
	in.emitLocked("capacity", s)
}

// replyLocked returns the row of id, creating it (and forgetting the
// oldest past MaxReplies); nil for a message without an id.
func (in *Inspector) replyLocked(id string) *reply {
	if id == "" {
		return nil
	}
	if r := in.byID[id]; r != nil {
		return r
	}
	r := &reply{segs: map[int]*segment{}}
	r.view.ID = id
	in.replies = append(in.replies, r)
	in.byID[id] = r
	for len(in.replies) > in.o.MaxReplies {
		in.forgetLocked(in.replies[0])
	}
	in.chargeLocked(r, len(id)+256)
	return r
}

func (in *Inspector) forgetLocked(r *reply) {
	in.replies = slices.DeleteFunc(in.replies, func(x *reply) bool { return x == r })
	delete(in.byID, r.view.ID)
	in.replyBytes -= r.bytes
	in.emitLocked("forget", r.view.ID)
}

// chargeLocked counts n more bytes for r, forgetting the oldest other
// replies past MaxReplyBytes, and reports whether they fit.
func (in *Inspector) chargeLocked(r *reply, n int) bool {
	for in.replyBytes+n > in.o.MaxReplyBytes && len(in.replies) > 0 && in.replies[0] != r {
		in.forgetLocked(in.replies[0])
	}
	if in.replyBytes+n > in.o.MaxReplyBytes {
		return false
	}
	in.replyBytes += n
	r.bytes += n
	return true
}

// pointLocked adds a point to r's timeline, in time order.
func (in *Inspector) pointLocked(r *reply, name string, t time.Time, detail string) {
	const maxPoints = 64
	if len(r.view.Points) >= maxPoints {
		return
	}
	p := point{Name: name, T: ms(t), Detail: detail}
	i := len(r.view.Points)
	for i > 0 && r.view.Points[i-1].T > p.T {
		i--
	}
	r.view.Points = slices.Insert(r.view.Points, i, p)
	in.emitReplyLocked(r)
}

// textLocked appends a delta to r's text, or sets the whole text.
func (in *Inspector) textLocked(r *reply, s string, whole bool) {
	n := len(s)
	if whole {
		n -= len(r.text)
	}
	if !in.chargeLocked(r, max(n, 0)) {
		r.view.AudioShort = "text and audio past MaxReplyBytes were not kept"
		in.emitReplyLocked(r)
		return
	}
	if whole {
		r.text = append(r.text[:0], s...)
		r.view.TextFull = true
	} else {
		r.text = append(r.text, s...)
	}
	in.emitLocked("text", textEvent{ID: r.view.ID, Text: s, Whole: whole})
}

type textEvent struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Whole bool   `json:"whole"` // Text replaces what streamed
}

// viewLocked returns r's row; with text, the whole text too.
func (in *Inspector) viewLocked(r *reply, text bool) replyView {
	v := r.view
	v.Points = slices.Clone(v.Points)
	v.Notes = slices.Clone(v.Notes)
	v.Segments = make([]segmentView, 0, len(r.segs))
	for _, s := range r.segs {
		v.Segments = append(v.Segments, s.view)
	}
	slices.SortFunc(v.Segments, func(a, b segmentView) int { return a.Index - b.Index })
	if text {
		v.Text = string(r.text)
	}
	return v
}

// sessionNote adds a note about the session (no reply named).
func (in *Inspector) sessionNote(t time.Time, level, text string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.closed {
		in.sessionNoteLocked(t, level, text)
	}
}

func (in *Inspector) sessionNoteLocked(t time.Time, level, text string) {
	n := note{T: ms(t), Level: level, Text: clip(text)}
	if len(in.notes) == maxNotes {
		in.notes = slices.Delete(in.notes, 0, maxNotes/4)
	}
	in.notes = append(in.notes, n)
	in.emitLocked("note", noteEvent{Note: n})
}

// replyNoteLocked adds a note to r, and reports false when r keeps no
// more notes.
func (in *Inspector) replyNoteLocked(r *reply, n note) bool {
	if len(r.view.Notes) >= maxReplyNotes || !in.chargeLocked(r, len(n.Text)+32) {
		return false
	}
	r.view.Notes = append(r.view.Notes, n)
	in.emitLocked("note", noteEvent{ID: r.view.ID, Note: n})
	return true
}

type noteEvent struct {
	ID   string `json:"id,omitempty"` // the reply, or none for the session
	Note note   `json:"note"`
}

func clip(s string) string {
	if len(s) <= maxNoteBytes {
		return s
	}
	return s[:maxNoteBytes] + "…"
}

func mapBytes(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v) + 16
	}
	return n
}

// logRecord takes a record of the Logger: beside the reply it names, or
// in the session's notes.
func (in *Inspector) logRecord(t time.Time, level, text, id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	n := note{T: ms(t), Level: level, Text: clip(text)}
	if r := in.byID[id]; r != nil && in.replyNoteLocked(r, n) {
		return
	}
	in.sessionNoteLocked(t, level, text)
}
