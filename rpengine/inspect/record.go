package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// recLine is one line of the Recorder (internal/jsonl).
type recLine struct {
	T    string          `json:"t"`
	Dir  string          `json:"dir"`
	Note string          `json:"note"`
	Msg  json.RawMessage `json:"msg"`
	Raw  string          `json:"raw"`
}

// Write takes the Recorder's JSON Lines ([rpengine.ServerOptions.Recorder]
// writes one line a call, on a goroutine of its own): each line updates
// the kept state and, when a page watches, is sent to it. A line may
// also span Writes; one over 9 MiB (a message is at most 8 MiB) is
// dropped with a note. Write never fails and does not keep p.
func (in *Inspector) Write(p []byte) (int, error) {
	n := len(p)
	in.wmu.Lock()
	defer in.wmu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			in.partial = appendBounded(in.partial, p)
			break
		}
		line := p[:i]
		if len(in.partial) > 0 {
			line = appendBounded(in.partial, line) // in.line keeps nothing of it
			in.partial = in.partial[:0]
			if cap(in.partial) > 1<<20 {
				in.partial = nil // after a long line, hold nothing
			}
		}
		if len(line) > maxLineBytes {
			in.sessionNote(time.Now(), "WARN", "inspector: dropped a recorder line over 9 MiB")
		} else if len(line) > 0 {
			in.line(line)
		}
		p = p[i+1:]
	}
	return n, nil
}

// appendBounded appends p to b, keeping one byte past maxLineBytes to
// mark a line as too long without holding more of it.
func appendBounded(b, p []byte) []byte {
	if room := maxLineBytes + 1 - len(b); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(b, p...)
}

// line takes one recorded line.
func (in *Inspector) line(b []byte) {
	l, ok := splitLine(b)
	if !ok {
		if err := json.Unmarshal(b, &l); err != nil {
			in.sessionNote(time.Now(), "WARN", "inspector: unreadable recorder line: "+err.Error())
			return
		}
	}
	t, err := time.Parse(time.RFC3339Nano, l.T)
	if err != nil {
		t = time.Now()
	}
	if l.Dir == seamDir || l.Msg == nil {
		in.note(t, l)
		return
	}
	var m message
	switch {
	case in.chunk(l, &m):
	case l.Dir == "out" && bytes.Contains(l.Msg[:min(len(l.Msg), 96)], []byte(`"type":"ack"`)):
		// The game's ack (one for every engine message): only its type
		// is used, and the game writes the type third, after protocol and
		// protocolVersion.
		m.Type = "ack"
	default:
		if err := json.Unmarshal(l.Msg, &m); err != nil {
			in.sessionNote(t, "WARN", "inspector: unreadable message: "+err.Error())
			return
		}
	}
	shown := elide(l.Msg, &m)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.emitLocked("log", in.log.add(t, l.Dir, m.Type, m.RequestID, len(l.Msg), "", shown))
	if l.Dir == "out" {
		in.outLocked(t, &m)
	} else {
		in.inLocked(t, &m)
	}
}

// splitLine takes apart the line the recorder writes for a message or
// one of the game's notes, {"t":"…","dir":"…","note":"…","msg":…} (the
// note only for notes), without decoding the message (a file-mode
// segment's note holds its samples); ok is false for any other shape (a
// raw message, a note with escapes), which encoding/json decodes. The
// recorder's timestamps and directions have no escapes.
func splitLine(b []byte) (l recLine, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"t":"`))
	if !ok {
		return l, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return l, false
	}
	l.T = string(rest[:i])
	if rest, ok = bytes.CutPrefix(rest[i:], []byte(`","dir":"`)); !ok {
		return l, false
	}
	if i = bytes.IndexByte(rest, '"'); i < 0 {
		return l, false
	}
	l.Dir, rest = string(rest[:i]), rest[i:]
	if r, ok := bytes.CutPrefix(rest, []byte(`","note":"`)); ok {
		if i = bytes.IndexByte(r, '"'); i < 0 || bytes.IndexByte(r[:i], '\\') >= 0 {
			return l, false
		}
		l.Note, rest = string(r[:i]), r[i:]
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","msg":`)); !ok || len(rest) < 3 || rest[0] != '{' || rest[len(rest)-1] != '}' {
		return l, false
	}
	l.Msg = rest[:len(rest)-1]
	return l, true
}

// chunk decodes m when it is a reply.audio.chunk, with the decoder the
// server's reader uses (a chunk is about 44 KB of JSON, almost all
// base64), and reports whether it was one. Only Write calls it, so the
// decoder (Inspector.wmu) is its own.
func (in *Inspector) chunk(l recLine, m *message) bool {
	if l.Dir != "in" || !bytes.Contains(l.Msg[:min(len(l.Msg), 160)], []byte(`"reply.audio.chunk"`)) {
		return false
	}
	var c wire.AudioChunk
	if _, err := in.chunks.Decode(&c, l.Msg); err != nil {
		return false
	}
	pcm := in.chunks.PCM()
	if pcm == nil {
		var err error
		if pcm, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
			return false
		}
	}
	seg := c.SegmentSequence
	*m = message{Type: wire.TypeAudioChunk, RequestID: c.RequestID, SegmentSequence: &seg,
		SegmentChunkSequence: c.SegmentChunkSequence, SegmentChunkCount: c.SegmentChunkCount, Data: bytes.Clone(pcm)}
	return true
}

// note takes a recorder line without a message: the recorder's own
// notes (lines it dropped) and the core's timeline notes (seam.go).
func (in *Inspector) note(t time.Time, l recLine) {
	if l.Dir == seamDir {
		in.seam(t, l)
		return
	}
	in.sessionNote(t, "WARN", l.Note)
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.closed {
		in.emitLocked("log", in.log.add(t, l.Dir, "", "", 0, l.Note, nil))
	}
}
