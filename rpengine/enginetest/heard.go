package enginetest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// heard is what the default script says the player said: the event's
// text, or, for recorded speech without text, its length, since the fake
// has no speech-to-text ("(2.5 seconds of speech)"; Issue #32).
func heard(r Request) string {
	if text := strings.TrimSpace(r.Text); text != "" || !r.HasAudio {
		return text
	}
	return fmt.Sprintf("(%.1f seconds of speech)", float64(len(r.Speech))/inputRate)
}

// inputRate and maxInputSeconds are the engine's for event.audio.
const (
	inputRate       = 16000
	maxInputSeconds = 30
)

// decodeSpeech decodes event.audio (raw, validated already: 16 kHz mono,
// pcm_s16le or pcm_f32le) into the float samples the engine hears, as the
// engine does when the request runs (docs/rpengine-protocol.md, "Game to
// engine"): pcm_s16le as sample/32768, pcm_f32le as the floats themselves.
// Bad base64, no sample or a partial one, a non-finite float and more
// than 30 s are errors: the engine then fails the request with
// request_failed, after reply.accepted (Issue #33).
func decodeSpeech(raw json.RawMessage) ([]float32, error) {
	var a struct {
		Format string `json:"format"`
		Data   string `json:"data"`
	}
	_ = json.Unmarshal(raw, &a) // validated already
	b, err := base64.StdEncoding.DecodeString(a.Data)
	if err != nil {
		return nil, errors.New("event.audio.data is not valid base64")
	}
	size := 4 // pcm_f32le
	if a.Format == "pcm_s16le" {
		size = 2
	}
	switch n := len(b) / size; {
	case len(b) == 0 || len(b)%size != 0:
		return nil, fmt.Errorf("event.audio holds %d bytes, not a whole number of %s samples", len(b), a.Format)
	case n > maxInputSeconds*inputRate:
		return nil, fmt.Errorf("event.audio is %.1f s, over the %d s limit", float64(n)/inputRate, maxInputSeconds)
	}
	out := make([]float32, len(b)/size)
	for i := range out {
		if size == 2 {
			out[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
			continue
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("event.audio sample %d is not a finite number", i)
		}
		out[i] = v
	}
	return out, nil
}
