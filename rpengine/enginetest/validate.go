package enginetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// validate applies the checks upstream's engine applies to a game message
// before acking it (its envelope decoder); a failure is answered with
// invalid_payload and no ack.
func validate(h wire.Header, data []byte) error {
	switch h.Type {
	case wire.TypeCharacterSync, wire.TypeReplyRequest, wire.TypeCaptureStart,
		wire.TypeCaptureStop, wire.TypeCaptureCancel, wire.TypeRequestCancel:
	default:
		// Nothing more to check: wire.DecodeHeader accepted data, so it is
		// a well-formed JSON object, which the decoding below cannot refuse
		// (issue #24: it was most of the fake's work per ack received).
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	switch h.Type {
	case wire.TypeCharacterSync:
		if err := reqStrings(m, "integrationId", "characterId"); err != nil {
			return err
		}
		return validateTransfer(m["card"])
	case wire.TypeReplyRequest, wire.TypeCaptureStart:
		if err := reqStrings(m, "requestId", "eventId", "integrationId", "characterId"); err != nil {
			return err
		}
		if h.Type == wire.TypeReplyRequest {
			if err := validateEvent(m["event"]); err != nil {
				return err
			}
		} else {
			if v, ok := m["returnTranscript"]; ok && string(v) != "true" && string(v) != "false" {
				return errors.New("returnTranscript must be a boolean")
			}
			if v, ok := m["silenceBehavior"]; ok && string(v) != `"error"` && string(v) != `"restart"` {
				return errors.New(`silenceBehavior must be "error" or "restart"`)
			}
		}
		if err := validateOutput(m["output"]); err != nil {
			return err
		}
		if err := validateTransfer(m["card"]); err != nil {
			return err
		}
		return validatePrompt(m)
	case wire.TypeCaptureStop, wire.TypeCaptureCancel, wire.TypeRequestCancel:
		return reqStrings(m, "requestId")
	}
	return nil
}

func str(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func reqStrings(m map[string]json.RawMessage, keys ...string) error {
	for _, k := range keys {
		if s, ok := str(m[k]); !ok || s == "" {
			return fmt.Errorf("missing RPEngine %s", k)
		}
	}
	return nil
}

func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if raw == nil || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func validateTransfer(raw json.RawMessage) error {
	c, ok := object(raw)
	if !ok {
		return errors.New("missing character card transfer descriptor")
	}
	if f, _ := str(c["format"]); f != "chara_card_v2" {
		return errors.New("only chara_card_v2 is supported")
	}
	mode, _ := str(c["mode"])
	switch mode {
	case "snapshot":
		if _, ok := object(c["snapshot"]); !ok {
			return errors.New("a snapshot transfer requires a card object")
		}
		return nil
	case "patch", "reference":
	default:
		return errors.New("invalid character card transfer mode")
	}
	if err := reqStrings(c, "targetHash"); err != nil {
		return err
	}
	if mode == "patch" {
		if err := reqStrings(c, "baseHash"); err != nil {
			return err
		}
		var ops []json.RawMessage
		if json.Unmarshal(c["patch"], &ops) != nil || ops == nil {
			return errors.New("a patch transfer requires RFC 6902 operations")
		}
	}
	return nil
}

func validateEvent(raw json.RawMessage) error {
	ev, ok := object(raw)
	if !ok {
		return errors.New("reply.request requires event.text, event.audio, or both")
	}
	text, isStr := str(ev["text"])
	audio, hasAudio := object(ev["audio"])
	if strings.TrimSpace(text) == "" && !hasAudio {
		return errors.New("reply.request requires event.text, event.audio, or both")
	}
	if ev["text"] != nil && !isStr {
		return errors.New("event.text must be a string")
	}
	if !hasAudio {
		return nil
	}
	if f, _ := str(audio["format"]); f != "pcm_s16le" && f != "pcm_f32le" {
		return errors.New("audio input must use pcm_s16le or pcm_f32le")
	}
	if string(audio["sampleRate"]) != "16000" || string(audio["channels"]) != "1" {
		return errors.New("audio input must be 16 kHz mono PCM")
	}
	if d, _ := str(audio["data"]); d == "" {
		return errors.New("audio input requires base64 data")
	}
	if l, ok := audio["language"]; ok {
		s, _ := str(l)
		if !slices.Contains(strings.Fields("en ar es ja ko vi uk zh"), s) {
			return errors.New("unsupported Moonshine input language")
		}
	}
	return nil
}

func validateOutput(raw json.RawMessage) error {
	o, ok := object(raw)
	if !ok {
		return errors.New("reply.request requires output parameters")
	}
	var mods []string
	if json.Unmarshal(o["modalities"], &mods) != nil || !slices.Contains(mods, "text") {
		return errors.New("output.modalities must include text and may include audio")
	}
	for _, m := range mods {
		if m != "text" && m != "audio" {
			return errors.New("output.modalities must include text and may include audio")
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(mods)))) != len(mods) {
		return errors.New("output.modalities cannot contain duplicates")
	}
	if slices.Contains(mods, "audio") {
		a, ok := object(o["audio"])
		model, _ := str(a["model"])
		voice, _ := str(a["voice"])
		if !ok || model != "gemtavern-supertonic-3" || strings.TrimSpace(voice) == "" {
			return errors.New("audio output requires a Supertonic 3 model and voice descriptor")
		}
		if f, ok := a["format"]; ok && string(f) != `"pcm_s16le"` {
			return errors.New("unsupported audio output format")
		}
		if p, ok := a["processing"]; ok {
			po, ok := object(p)
			prof, _ := str(po["profile"])
			if !ok || (prof != "narrowband_voice" && prof != "cinematic_radio") {
				return errors.New("unsupported audio processing profile")
			}
		}
	} else if _, ok := o["audio"]; ok {
		return errors.New("output.audio requires the audio modality")
	}
	if l, _ := str(o["language"]); strings.TrimSpace(l) == "" {
		return errors.New("output.language is required")
	}
	_, err := parseProcessing(o["responseProcessing"])
	return err
}

func validatePrompt(m map[string]json.RawMessage) error {
	n := 0
	for _, k := range []string{"interactionMode", "promptScene", "promptDirective"} {
		if _, ok := m[k]; ok {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n != 3 {
		return errors.New("prompt context requires interactionMode, promptScene, and promptDirective together")
	}
	if s, _ := str(m["interactionMode"]); s != "auto_event" && s != "direct_user" {
		return errors.New("unsupported interactionMode")
	}
	scene, ok := object(m["promptScene"])
	if !ok {
		return errors.New("promptScene must be an object")
	}
	if err := reqStrings(scene, "kind", "family", "label", "sceneLine"); err != nil {
		return err
	}
	var prio float64
	if json.Unmarshal(scene["priority"], &prio) != nil || math.IsInf(prio, 0) {
		return errors.New("promptScene.priority must be a finite number")
	}
	dir, ok := object(m["promptDirective"])
	if !ok {
		return errors.New("promptDirective must be an object")
	}
	var pv int64
	if json.Unmarshal(dir["protocolVersion"], &pv) != nil || pv < 1 {
		return errors.New("promptDirective.protocolVersion must be a positive integer")
	}
	if err := reqStrings(dir, "sceneContext", "autoEventGuide", "directUserGuide"); err != nil {
		return err
	}
	if v, ok := dir["promptVersion"]; ok {
		if s, _ := str(v); strings.TrimSpace(s) == "" {
			return errors.New("promptDirective.promptVersion must be a non-empty string when present")
		}
	}
	return nil
}
