package inspect

import "time"

// logEntry is one message of the protocol log. The page gets the summary
// and fetches the JSON on click.
type logEntry struct {
	ID      int64  `json:"id"`
	T       int64  `json:"t"`
	Dir     string `json:"dir"` // in, out, or "" for a recorder note
	Type    string `json:"type,omitempty"`
	Request string `json:"request,omitempty"`
	Bytes   int    `json:"bytes"` // of the message as recorded
	Note    string `json:"note,omitempty"`
	json    []byte // as shown: audio elided
}

// entryOverhead is what an entry costs beyond its JSON, roughly.
const entryOverhead = 96

// logRing keeps the newest entries within max bytes. IDs are consecutive,
// so an entry is found by its distance from the first.
type logRing struct {
	entries []logEntry
	bytes   int
	next    int64
	max     int
}

func (l *logRing) add(t time.Time, dir, typ, req string, n int, note string, shown []byte) logEntry {
	e := logEntry{ID: l.next, T: ms(t), Dir: dir, Type: typ, Request: req, Bytes: n, Note: note, json: shown}
	l.next++
	l.entries = append(l.entries, e)
	l.bytes += e.size()
	for l.bytes > l.max && len(l.entries) > 0 {
		l.bytes -= l.entries[0].size()
		l.entries[0] = logEntry{}
		l.entries = l.entries[1:]
	}
	return e
}

func (e *logEntry) size() int {
	return entryOverhead + len(e.json) + len(e.Type) + len(e.Request) + len(e.Note)
}

// get returns the entry of id, if it is still kept.
func (l *logRing) get(id int64) (logEntry, bool) {
	if len(l.entries) == 0 {
		return logEntry{}, false
	}
	i := id - l.entries[0].ID
	if i < 0 || i >= int64(len(l.entries)) {
		return logEntry{}, false
	}
	return l.entries[i], true
}
