package inspect

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// watcher is one page's event stream. Events are formatted once, queued
// per page (at most maxWatcherBytes: a page that falls that far behind
// is dropped, and its EventSource reconnects to a fresh snapshot), and
// written by the page's own request goroutine.
type watcher struct {
	q     [][]byte // guarded by Inspector.mu, as are bytes and slow
	bytes int
	slow  bool
	wake  chan struct{} // one slot
}

// emitLocked sends an event to every page. With no page watching it
// costs a length check.
func (in *Inspector) emitLocked(event string, v any) {
	if len(in.watchers) == 0 {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	b := make([]byte, 0, len(event)+len(data)+16)
	b = append(append(append(b, "event: "...), event...), "\ndata: "...)
	b = append(append(b, data...), "\n\n"...)
	for w := range in.watchers {
		switch {
		case w.slow:
			continue
		case w.bytes+len(b) > maxWatcherBytes:
			w.slow, w.q, w.bytes = true, nil, 0
		default:
			w.q = append(w.q, b)
			w.bytes += len(b)
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// emitReplyLocked sends r's row to every page (without its text).
func (in *Inspector) emitReplyLocked(r *reply) {
	if len(in.watchers) > 0 {
		in.emitLocked("reply", in.viewLocked(r, false))
	}
}

func (in *Inspector) emitCharactersLocked() {
	if len(in.watchers) > 0 {
		in.emitLocked("characters", in.charactersLocked())
	}
}

// snapshot is the first event of a stream: everything kept.
type snapshot struct {
	Session    sessionView `json:"session"`
	Capacity   []capSample `json:"capacity"`
	Characters []character `json:"characters"`
	Replies    []replyView `json:"replies"`
	Notes      []note      `json:"notes"`
	Log        []logEntry  `json:"log"`
}

func (in *Inspector) snapshotLocked() snapshot {
	s := snapshot{Session: in.sess, Capacity: slices.Clone(in.caps), Characters: in.charactersLocked(),
		Notes: slices.Clone(in.notes), Log: slices.Clone(in.log.entries)}
	s.Session.Speakers = len(in.speakers)
	for _, r := range in.replies {
		s.Replies = append(s.Replies, in.viewLocked(r, true))
	}
	return s
}

// serveEvents streams events to a page until it goes, the Inspector
// closes, or the page falls behind. It also polls the speakers for the
// heard positions while the page watches (and only then).
func (in *Inspector) serveEvents(w http.ResponseWriter, r *http.Request) {
	in.mu.Lock()
	if len(in.watchers) >= in.o.MaxWatchers {
		in.mu.Unlock()
		http.Error(w, "inspect: too many pages watching", http.StatusServiceUnavailable)
		return
	}
	snap := in.snapshotLocked() // copies: marshalled without the lock
	wt := &watcher{wake: make(chan struct{}, 1)}
	in.watchers[wt] = struct{}{}
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.watchers, wt)
		in.mu.Unlock()
	}()
	data, err := json.Marshal(snap)
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(chunks ...[]byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second)) // a page that does not read is dropped
		for _, b := range chunks {
			if _, err := w.Write(b); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 1000\nevent: snapshot\ndata: "), data, []byte("\n\n")) {
		return
	}
	tick := time.NewTicker(heardEvery)
	defer tick.Stop()
	heard := map[string]heardEvent{}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-in.done:
			return
		case <-wt.wake:
			in.mu.Lock()
			q, slow := wt.q, wt.slow
			wt.q, wt.bytes = nil, 0
			in.mu.Unlock()
			if slow || !send(q...) {
				return
			}
		case <-tick.C:
			if evs := in.pollHeard(heard); len(evs) > 0 && !send(evs...) {
				return
			}
		}
	}
}
