package inspect

import (
	"encoding/json"
	"slices"

	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// Speaker is what the page asks of a speaker to show where playback is
// in a reply's waveforms; *audio.Speaker has it.
type Speaker interface {
	Heard(reply string) (audio.Position, bool)
}

// AddSpeaker shows s's heard position on the page: while a page
// watches, s is asked every 50 ms about the newest replies with audio
// (Heard must not block; audio.Speaker's takes its mutex briefly). At
// most 8 speakers are asked; adding a ninth forgets the first.
func (in *Inspector) AddSpeaker(s Speaker) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.speakers) == maxSpeakers {
		in.speakers = slices.Delete(in.speakers, 0, 1)
	}
	in.speakers = append(in.speakers, s)
	in.sess.Speakers = len(in.speakers)
	in.emitLocked("session", in.sess)
}

// heardEvent is a speaker's position in a reply.
type heardEvent struct {
	ID          string  `json:"id"`
	Segment     int     `json:"segment"`
	OffsetMs    float64 `json:"offsetMs"` // into the segment
	HeardMs     float64 `json:"heardMs"`  // of the whole reply
	Done        bool    `json:"done"`
	Interrupted bool    `json:"interrupted"`
}

// heardReplies is how many of the newest replies with audio are asked
// about.
const heardReplies = 4

// pollHeard asks the speakers about the newest replies with audio and
// returns, as events, the positions that moved since last (one page's,
// updated; a reply whose playback is done is not asked again).
func (in *Inspector) pollHeard(last map[string]heardEvent) [][]byte {
	in.mu.Lock()
	speakers := slices.Clone(in.speakers)
	var ids []string
	for i := len(in.replies) - 1; i >= 0 && len(ids) < heardReplies && len(speakers) > 0; i-- {
		if r := in.replies[i]; r.gotAudio {
			ids = append(ids, r.view.ID)
		}
	}
	in.mu.Unlock()
	var out [][]byte
	for _, id := range ids {
		if last[id].Done {
			continue
		}
		for _, s := range speakers { // no lock held: the speakers' code
			pos, ok := s.Heard(id)
			if !ok {
				continue
			}
			ev := heardEvent{ID: id, Segment: pos.Segment, OffsetMs: float64(pos.Offset.Microseconds()) / 1e3,
				HeardMs: float64(pos.Heard.Microseconds()) / 1e3, Done: pos.Done, Interrupted: pos.Interrupted}
			if ev != last[id] {
				last[id] = ev
				b, _ := json.Marshal(ev)
				out = append(out, append(append([]byte("event: heard\ndata: "), b...), "\n\n"...))
			}
			break
		}
	}
	for id := range last {
		if !slices.Contains(ids, id) {
			delete(last, id)
		}
	}
	return out
}
