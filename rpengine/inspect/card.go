package inspect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// cardField is the transfer descriptor of a request or a character.sync
// (docs/rpengine-protocol.md, "Cards and hashes").
type cardField struct {
	Mode       string            `json:"mode"`
	TargetHash string            `json:"targetHash"`
	BaseHash   string            `json:"baseHash"`
	Patch      []json.RawMessage `json:"patch"`
	Snapshot   *struct {
		Data struct {
			Name string `json:"name"`
		} `json:"data"`
	} `json:"snapshot"`
}

// cardLocked updates the character whose card m carries, and returns it
// and the transfer (nil when m has no card).
func (in *Inspector) cardLocked(t time.Time, m *message) (*character, *cardView) {
	if len(m.Card) == 0 {
		return nil, nil
	}
	var f cardField
	_ = json.Unmarshal(m.Card, &f) // what does not decode shows as blank
	key := m.IntegrationID + "/" + m.CharacterID
	c := in.chars[key]
	if c == nil {
		if len(in.chars) >= maxCharacters {
			oldest := ""
			for k, o := range in.chars {
				if oldest == "" || o.T < in.chars[oldest].T {
					oldest = k
				}
			}
			delete(in.chars, oldest)
		}
		c = &character{Key: key}
		in.chars[key] = c
	}
	if f.Snapshot != nil {
		c.Name = clip(f.Snapshot.Data.Name)
	}
	c.Hash, c.Mode, c.Bytes, c.Synced, c.T = f.TargetHash, f.Mode, len(m.Card), false, ms(t)
	c.Requests++
	in.emitCharactersLocked()
	return c, &cardView{Mode: f.Mode, Bytes: len(m.Card), HashPrefix: prefix(f.TargetHash), BasePrefix: prefix(f.BaseHash), Ops: len(f.Patch)}
}

func (in *Inspector) charactersLocked() []character {
	cs := make([]character, 0, len(in.chars))
	for _, c := range in.chars {
		cs = append(cs, *c)
	}
	slices.SortFunc(cs, func(a, b character) int { return strings.Compare(a.Key, b.Key) })
	return cs
}

func prefix(hash string) string { return hash[:min(12, len(hash))] }

// promptOf lists what a request asked for: the event, the output and the
// prompt context, one field a line.
func promptOf(m *message) map[string]string {
	p := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			p[k] = clip(v)
		}
	}
	if e := m.Event; e != nil {
		set("event.text", e.Text)
		if a := e.Audio; a != nil && a.SampleRate > 0 {
			set("event.audio", fmt.Sprintf("%.2f s of speech (%s)", float64(len(a.Data)/2)/float64(a.SampleRate), a.Language))
		}
	}
	if o := m.Output; o != nil {
		set("output.modalities", strings.Join(o.Modalities, ", "))
		set("output.language", o.Language)
		if a := o.Audio; a != nil {
			set("output.audio.voice", a.Voice)
			if a.Processing != nil {
				set("output.audio.profile", a.Processing.Profile)
			}
		}
		if rp := o.ResponseProcessing; rp != nil {
			ids := make([]string, len(rp.Rules))
			for i, r := range rp.Rules {
				ids[i] = r.ID
			}
			set("output.responseProcessing", "buffered: "+strings.Join(ids, ", "))
		}
	}
	if m.Player != nil {
		set("player.displayName", m.Player.DisplayName)
	}
	set("interactionMode", m.InteractionMode)
	flatten(p, "promptScene", m.PromptScene)
	flatten(p, "promptDirective", m.PromptDirective)
	return p
}

// flatten sets one entry per member of the JSON object raw.
func flatten(p map[string]string, name string, raw json.RawMessage) {
	var o map[string]any
	if json.Unmarshal(raw, &o) != nil {
		return
	}
	for k, v := range o {
		s, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		p[name+"."+k] = clip(s)
	}
}
