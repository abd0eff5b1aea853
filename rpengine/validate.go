package rpengine

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

var (
	outputLanguages = strings.Fields("en ko es pt fr de it pl ru nl cs ar zh ja hu tr fi sk da hr el sv nb he uk id ms vi th ro bg")
	inputLanguages  = strings.Fields("en ar es ja ko vi uk zh")
	voices          = strings.Fields("F1 F2 F3 F4 F5 M1 M2 M3 M4 M5")
	ruleID          = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)
)

// Limits of the spec (section 5).
const (
	maxAudioInputSeconds = 30
	inputSampleRate      = 16000
	speechModel          = "gemtavern-supertonic-3"
	maxPatternBytes      = 1024
	maxRules             = 8
)

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func validateTarget(integrationID, characterID string, c *card.Card) error {
	switch {
	case integrationID == "":
		return fieldErr("integrationId", "required")
	case characterID == "":
		return fieldErr("characterId", "required")
	case c == nil:
		return fieldErr("card", "required")
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %w", &FieldError{Field: "card", Reason: "not a valid Character Card V2"}, err)
	}
	return nil
}

// payload builds and validates the wire form of a reply request.
func (r *ReplyRequest) payload() (*requestPayload, error) {
	if err := validateTarget(r.IntegrationID, r.CharacterID, r.Card); err != nil {
		return nil, err
	}
	p := &requestPayload{RequestID: r.RequestID, EventID: r.EventID, IntegrationID: r.IntegrationID, CharacterID: r.CharacterID,
		Output: r.Output, Player: r.Player, InteractionMode: r.InteractionMode, PromptScene: r.PromptScene, PromptDirective: r.PromptDirective}
	if strings.TrimSpace(r.Text) == "" && r.Audio == nil {
		return nil, fieldErr("event", "needs non-blank text, audio, or both")
	}
	p.Event = &eventPayload{Text: r.Text}
	if r.Audio != nil {
		a := *r.Audio
		if err := validateAudioInput(&a); err != nil {
			return nil, err
		}
		p.Event.Audio = &a
	}
	return p, p.finish()
}

// payload builds and validates the wire form of a voice capture.
func (r *CaptureRequest) payload() (*requestPayload, error) {
	if err := validateTarget(r.IntegrationID, r.CharacterID, r.Card); err != nil {
		return nil, err
	}
	p := &requestPayload{RequestID: r.RequestID, EventID: r.EventID, IntegrationID: r.IntegrationID, CharacterID: r.CharacterID,
		Output: r.Output, Player: r.Player, InteractionMode: r.InteractionMode, PromptScene: r.PromptScene, PromptDirective: r.PromptDirective,
		SilenceBehavior: r.SilenceBehavior}
	if r.ReturnTranscript {
		p.ReturnTranscript = &r.ReturnTranscript
	}
	if s := r.SilenceBehavior; s != "" && s != "error" && s != "restart" {
		return nil, fieldErr("silenceBehavior", "%q is not error or restart", s)
	}
	return p, p.finish()
}

// finish fills generated ids and defaults and validates the shared fields.
func (p *requestPayload) finish() error {
	if p.RequestID == "" {
		p.RequestID = "req-" + newID()
	}
	if p.EventID == "" {
		p.EventID = "evt-" + newID()
	}
	if err := p.Output.normalize(); err != nil {
		return err
	}
	if p.Player != nil && strings.TrimSpace(p.Player.DisplayName) == "" {
		return fieldErr("player.displayName", "must not be blank when player is set")
	}
	return validatePromptContext(p.InteractionMode, p.PromptScene, p.PromptDirective)
}

func validateAudioInput(a *AudioInput) error {
	if a.Format == "" {
		a.Format = "pcm_s16le"
	}
	if a.SampleRate == 0 {
		a.SampleRate = inputSampleRate
	}
	if a.Channels == 0 {
		a.Channels = 1
	}
	size := 2
	switch a.Format {
	case "pcm_s16le":
	case "pcm_f32le":
		size = 4
	default:
		return fieldErr("event.audio.format", "%q is not pcm_s16le or pcm_f32le", a.Format)
	}
	switch {
	case a.SampleRate != inputSampleRate:
		return fieldErr("event.audio.sampleRate", "%d Hz; the engine takes 16000 Hz only", a.SampleRate)
	case a.Channels != 1:
		return fieldErr("event.audio.channels", "%d; the engine takes mono only", a.Channels)
	case len(a.Data) == 0:
		return fieldErr("event.audio.data", "empty")
	case len(a.Data)%size != 0:
		return fieldErr("event.audio.data", "%d bytes is not a whole number of %d-byte samples", len(a.Data), size)
	case len(a.Data)/size > maxAudioInputSeconds*inputSampleRate:
		return fieldErr("event.audio.data", "%.1f s of audio, over the 30 s limit", float64(len(a.Data)/size)/inputSampleRate)
	case a.Language != "" && !slices.Contains(inputLanguages, a.Language):
		return fieldErr("event.audio.language", "%q is not one of %v", a.Language, inputLanguages)
	}
	return nil
}

// normalize applies Output's defaults and validates it.
func (o *Output) normalize() error {
	if len(o.Modalities) == 0 {
		o.Modalities = []string{"text"}
		if o.Audio != nil {
			o.Modalities = append(o.Modalities, "audio")
		}
	}
	if o.Language == "" {
		o.Language = "en"
	}
	seen := map[string]bool{}
	for i, m := range o.Modalities {
		if m != "text" && m != "audio" {
			return fieldErr(fmt.Sprintf("output.modalities[%d]", i), "%q is not text or audio", m)
		}
		if seen[m] {
			return fieldErr(fmt.Sprintf("output.modalities[%d]", i), "duplicate %q", m)
		}
		seen[m] = true
	}
	if !seen["text"] {
		return fieldErr("output.modalities", "must contain text")
	}
	if !slices.Contains(outputLanguages, o.Language) {
		return fieldErr("output.language", "%q is not a supported reply language", o.Language)
	}
	if seen["audio"] != (o.Audio != nil) {
		return fieldErr("output.audio", "is required exactly when modalities contain audio")
	}
	if o.Audio != nil {
		a := *o.Audio
		o.Audio = &a
		if a.Model == "" {
			a.Model = speechModel
		}
		switch {
		case a.Model != speechModel:
			return fieldErr("output.audio.model", "%q is not %s", a.Model, speechModel)
		case !slices.Contains(voices, a.Voice):
			return fieldErr("output.audio.voice", "%q is not F1-F5 or M1-M5", a.Voice)
		case a.Format != "" && a.Format != "pcm_s16le":
			return fieldErr("output.audio.format", "%q is not pcm_s16le", a.Format)
		case a.Processing != nil && a.Processing.Profile != "narrowband_voice" && a.Processing.Profile != "cinematic_radio":
			return fieldErr("output.audio.processing.profile", "%q is not narrowband_voice or cinematic_radio", a.Processing.Profile)
		}
	}
	if o.ResponseProcessing != nil {
		rp := *o.ResponseProcessing
		o.ResponseProcessing = &rp
		return rp.validate()
	}
	return nil
}

func (rp *ResponseProcessing) validate() error {
	if rp.Mode == "" {
		rp.Mode = "buffered"
	}
	if rp.Mode != "buffered" {
		return fieldErr("output.responseProcessing.mode", "%q is not buffered", rp.Mode)
	}
	if len(rp.Rules) < 1 || len(rp.Rules) > maxRules {
		return fieldErr("output.responseProcessing.rules", "%d rules; 1 to 8 are allowed", len(rp.Rules))
	}
	rules := slices.Clone(rp.Rules)
	rp.Rules = rules
	ids := map[string]bool{}
	for i := range rules {
		if err := rules[i].validate(fmt.Sprintf("output.responseProcessing.rules[%d]", i), ids); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rule) validate(at string, ids map[string]bool) error {
	if r.Matcher.Type == "" {
		r.Matcher.Type = "regex"
	}
	switch {
	case !ruleID.MatchString(r.ID):
		return fieldErr(at+".id", "%q does not match ^[a-z][a-z0-9_.-]{0,63}$", r.ID)
	case ids[r.ID]:
		return fieldErr(at+".id", "duplicate %q", r.ID)
	case r.Matcher.Type != "regex":
		return fieldErr(at+".matcher.type", "%q is not regex", r.Matcher.Type)
	case r.Matcher.Pattern == "":
		return fieldErr(at+".matcher.pattern", "empty")
	case len(r.Matcher.Pattern) > maxPatternBytes:
		return fieldErr(at+".matcher.pattern", "%d bytes, over 1024", len(r.Matcher.Pattern))
	case r.CaptureGroup < 0:
		return fieldErr(at+".captureGroup", "%d is negative", r.CaptureGroup)
	case r.Occurrence != "first" && r.Occurrence != "last" && r.Occurrence != "all":
		return fieldErr(at+".occurrence", "%q is not first, last or all", r.Occurrence)
	case r.Remove != "match" && r.Remove != "capture" && r.Remove != "none":
		return fieldErr(at+".remove", "%q is not match, capture or none", r.Remove)
	case (r.Remove == "none") != (len(r.RemoveFrom) == 0):
		return fieldErr(at+".removeFrom", "must be empty exactly when remove is none")
	}
	ids[r.ID] = true
	if err := validateFlags(at+".matcher.flags", r.Matcher.Flags); err != nil {
		return err
	}
	if r.RemoveFrom == nil {
		r.RemoveFrom = []string{}
	}
	return uniqueSubset(at+".removeFrom", r.RemoveFrom, "text", "audio")
}

// validateFlags applies the engine's rule to matcher.flags: only the
// letters i, m and s, none twice.
func validateFlags(at, flags string) error {
	for i, c := range flags {
		if !strings.ContainsRune("ims", c) {
			return fieldErr(at, "%q: only the letters i, m and s are allowed", flags)
		}
		if strings.ContainsRune(flags[i+1:], c) {
			return fieldErr(at, "%q repeats %q", flags, c)
		}
	}
	return nil
}

func uniqueSubset(at string, vals []string, allowed ...string) error {
	seen := map[string]bool{}
	for i, v := range vals {
		if !slices.Contains(allowed, v) || seen[v] {
			return fieldErr(fmt.Sprintf("%s[%d]", at, i), "%q is not one of %v or repeats", v, allowed)
		}
		seen[v] = true
	}
	return nil
}

func validatePromptContext(mode string, scene *PromptScene, dir *PromptDirective) error {
	n := 0
	for _, set := range []bool{mode != "", scene != nil, dir != nil} {
		if set {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n != 3 {
		return fieldErr("interactionMode", "interactionMode, promptScene and promptDirective go together: all three or none")
	}
	if mode != "auto_event" && mode != "direct_user" {
		return fieldErr("interactionMode", "%q is not auto_event or direct_user", mode)
	}
	for name, v := range map[string]string{"kind": scene.Kind, "family": scene.Family, "label": scene.Label, "sceneLine": scene.SceneLine} {
		if strings.TrimSpace(v) == "" {
			return fieldErr("promptScene."+name, "must be a non-empty string")
		}
	}
	if math.IsNaN(scene.Priority) || math.IsInf(scene.Priority, 0) {
		return fieldErr("promptScene.priority", "must be a finite number")
	}
	if dir.ProtocolVersion < 1 {
		return fieldErr("promptDirective.protocolVersion", "%d; must be an integer >= 1", dir.ProtocolVersion)
	}
	for name, v := range map[string]string{"sceneContext": dir.SceneContext, "autoEventGuide": dir.AutoEventGuide, "directUserGuide": dir.DirectUserGuide} {
		if strings.TrimSpace(v) == "" {
			return fieldErr("promptDirective."+name, "must be a non-empty string")
		}
	}
	return nil
}
