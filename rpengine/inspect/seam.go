package inspect

import (
	"encoding/json"
	"strconv"
	"time"
)

// seamDir is the direction of the recorder lines that are not messages
// but the game's own moments (docs/inspector.md, "The seam"): when Reply
// was called, when a request began waiting and why, when it ended and
// how. The core does not write them yet; when it does, their points
// appear on the timeline.
const seamDir = "game"

// seamMsg is the msg of a seam line.
type seamMsg struct {
	RequestID     string `json:"requestId"`
	Kind          string `json:"kind"` // reply or capture (reply.submitted)
	IntegrationID string `json:"integrationId"`
	CharacterID   string `json:"characterId"`
	Reason        string `json:"reason"` // reply.waiting: capacity, character, queue or engine
	QueueDepth    int    `json:"queueDepth"`
	QueueLimit    int    `json:"queueLimit"`
	InFlight      int    `json:"inFlight"`
	Error         string `json:"error"`     // reply.ended: "" when it succeeded
	SessionID     string `json:"sessionId"` // session.ended
	Transport     string `json:"transport"` // transport: websocket or mailbox
	Dir           string `json:"dir"`       // transport: the mailbox folder
}

// seam takes one seam line.
func (in *Inspector) seam(t time.Time, l recLine) {
	var m seamMsg
	_ = json.Unmarshal(l.Msg, &m) // fields that do not decode stay zero
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.emitLocked("log", in.log.add(t, seamDir, l.Note, m.RequestID, len(l.Msg), "", append([]byte(nil), l.Msg...)))
	if !in.sess.Seam {
		in.sess.Seam = true
		in.emitLocked("session", in.sess)
	}
	switch l.Note {
	case "transport":
		in.sess.Transport, in.sess.MailboxDir = m.Transport, m.Dir
		in.emitLocked("session", in.sess)
	case "session.ended":
		if m.SessionID == in.sess.ID {
			in.sess.State = "ended"
			in.emitLocked("session", in.sess)
		}
	case "reply.submitted":
		if r := in.replyLocked(m.RequestID); r != nil {
			r.view.Kind, r.view.Character = m.Kind, m.IntegrationID+"/"+m.CharacterID
			in.pointLocked(r, "submitted", t, "")
		}
	case "reply.waiting":
		if r := in.byID[m.RequestID]; r != nil {
			in.pointLocked(r, "waiting", t, waitDetail(m))
		}
	case "reply.ended":
		if r := in.byID[m.RequestID]; r != nil && !r.view.Ended {
			if m.Error == "" {
				in.endLocked(r, "ended", t, "")
			} else {
				in.endLocked(r, "error", t, m.Error)
			}
		}
	}
}

func waitDetail(m seamMsg) string {
	switch m.Reason {
	case "capacity":
		return "for capacity: queueDepth " + strconv.Itoa(m.QueueDepth) + " + " + strconv.Itoa(m.InFlight) + " in flight of " + strconv.Itoa(m.QueueLimit)
	case "character":
		return "for the character's previous request to be accepted"
	case "queue":
		return "for earlier requests to be sent"
	case "engine":
		return "for an engine session"
	}
	return m.Reason
}
