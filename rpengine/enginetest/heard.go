package enginetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// heard is what the default script says the player said: the event's
// text, or, for recorded speech without text, its length, since the fake
// has no speech-to-text ("(2.5 seconds of speech)"; Issue #32).
func heard(r Request) string {
	if text := strings.TrimSpace(r.Text); text != "" || !r.HasAudio {
		return text
	}
	var m struct {
		Event struct {
			Audio struct {
				Format     string `json:"format"`
				SampleRate int    `json:"sampleRate"`
				Channels   int    `json:"channels"`
				Data       string `json:"data"`
			} `json:"audio"`
		} `json:"event"`
	}
	_ = json.Unmarshal(r.Raw, &m) // validated already
	a := m.Event.Audio
	bytesPerSample := 2 // pcm_s16le
	if a.Format == "pcm_f32le" {
		bytesPerSample = 4
	}
	n := base64.StdEncoding.DecodedLen(len(a.Data)) - strings.Count(a.Data[max(0, len(a.Data)-2):], "=")
	return fmt.Sprintf("(%.1f seconds of speech)", float64(n)/float64(bytesPerSample*max(1, a.Channels)*max(1, a.SampleRate)))
}
