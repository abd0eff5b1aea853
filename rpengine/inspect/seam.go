package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// seamDir is the direction of the recorder lines that are not messages
// but the game's own moments (docs/inspector.md, "The seam"): when Reply
// was called, when a request began waiting and why, when it ended and
// how, and in file mode each segment's audio.
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
	// reply.segment, whose "data" segmentData takes
	SegmentSequence int `json:"segmentSequence"`
	SampleRate      int `json:"sampleRate"`
}

// seam takes one seam line.
func (in *Inspector) seam(t time.Time, l recLine) {
	shown, pcm := l.Msg, []byte(nil)
	if l.Note == "reply.segment" {
		var err error
		if shown, pcm, err = segmentData(l.Msg); err != nil {
			in.sessionNote(t, "WARN", "inspector: unreadable reply.segment note: "+err.Error())
			return
		}
	}
	var m seamMsg
	_ = json.Unmarshal(shown, &m) // fields that do not decode stay zero
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.emitLocked("log", in.log.add(t, seamDir, l.Note, m.RequestID, len(l.Msg), "", bytes.Clone(shown)))
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
	case "reply.segment":
		if r := in.byID[m.RequestID]; r != nil && m.SegmentSequence >= 0 {
			in.samplesLocked(r, t, m.SegmentSequence, m.SampleRate, pcm)
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

// segmentData takes apart a reply.segment note's msg: the samples, the
// base64 string "data" that the core writes last, decoded, and the msg
// with them elided. In valid JSON the text `"data":"` can only start a
// member (a quote inside a string is escaped).
func segmentData(msg []byte) (shown, pcm []byte, err error) {
	key := []byte(`"data":"`)
	i := bytes.Index(msg, key)
	if i < 0 || !bytes.HasSuffix(msg, []byte(`"}`)) {
		return nil, nil, errors.New(`no "data" last`)
	}
	b64 := msg[i+len(key) : len(msg)-2]
	pcm = make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(pcm, b64)
	if err != nil {
		return nil, nil, err
	}
	return splice(msg, i+len(key), n), pcm[:n], nil
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
