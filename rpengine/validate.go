package rpengine

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

// Outbound validation (issue #15). Every rule here is at most as strict
// as the engine: a request refused here would be refused by the engine
// too, as invalid_payload or as a request.error once queued
// (unsupported_language, unsupported_voice, request_failed for audio it
// cannot decode). Where this package used to be stricter, the rule is now
// a warning, logged when the request is sent: see the package doc,
// "Outbound validation", and docs/rpengine-protocol.md.

var (
	outputLanguages = strings.Fields("en ko es pt fr de it pl ru nl cs ar zh ja hu tr fi sk da hr el sv nb he uk id ms vi th ro bg")
	inputLanguages  = strings.Fields("en ar es ja ko vi uk zh")
	voices          = strings.Fields("F1 F2 F3 F4 F5 M1 M2 M3 M4 M5")
	ruleID          = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)
)

// Limits the engine enforces (docs/rpengine-protocol.md).
const (
	maxAudioInputSeconds = 30
	inputSampleRate      = 16000
	speechModel          = "gemtavern-supertonic-3"
	maxPatternBytes      = 1024
	maxRules             = 8
	maxCaptureGroups     = 16
)

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// warnings collects what the engine accepts but is probably a mistake;
// they are logged, never refused.
type warnings []*FieldError

func (w *warnings) add(field, format string, args ...any) {
	*w = append(*w, &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// log writes each warning to l.
func (w warnings) log(l *slog.Logger, requestID string) {
	for _, fe := range w {
		l.Warn("rpengine: request field accepted by the engine but probably a mistake",
			"requestId", requestID, "field", fe.Field, "reason", fe.Reason)
	}
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
func (r *ReplyRequest) payload() (*requestPayload, warnings, error) {
	if err := validateTarget(r.IntegrationID, r.CharacterID, r.Card); err != nil {
		return nil, nil, err
	}
	p := &requestPayload{RequestID: r.RequestID, EventID: r.EventID, IntegrationID: r.IntegrationID, CharacterID: r.CharacterID,
		Output: r.Output, Player: r.Player, InteractionMode: r.InteractionMode, PromptScene: r.PromptScene, PromptDirective: r.PromptDirective}
	if strings.TrimSpace(r.Text) == "" && r.Audio == nil {
		return nil, nil, fieldErr("event", "needs non-blank text, audio, or both")
	}
	p.Event = &eventPayload{Text: r.Text}
	if r.Audio != nil {
		a := *r.Audio
		if err := validateAudioInput(&a); err != nil {
			return nil, nil, err
		}
		p.Event.Audio = &a
	}
	var w warnings
	return p, w, p.finish(&w)
}

// payload builds and validates the wire form of a voice capture.
func (r *CaptureRequest) payload() (*requestPayload, warnings, error) {
	if err := validateTarget(r.IntegrationID, r.CharacterID, r.Card); err != nil {
		return nil, nil, err
	}
	p := &requestPayload{RequestID: r.RequestID, EventID: r.EventID, IntegrationID: r.IntegrationID, CharacterID: r.CharacterID,
		Output: r.Output, Player: r.Player, InteractionMode: r.InteractionMode, PromptScene: r.PromptScene, PromptDirective: r.PromptDirective,
		SilenceBehavior: r.SilenceBehavior}
	if r.ReturnTranscript {
		p.ReturnTranscript = &r.ReturnTranscript
	}
	if s := r.SilenceBehavior; s != "" && s != "error" && s != "restart" {
		return nil, nil, fieldErr("silenceBehavior", "%q is not error or restart", s)
	}
	var w warnings
	return p, w, p.finish(&w)
}

// finish fills generated ids and defaults and validates the shared fields.
func (p *requestPayload) finish(w *warnings) error {
	if p.RequestID == "" {
		p.RequestID = "req-" + newID()
	}
	if p.EventID == "" {
		p.EventID = "evt-" + newID()
	}
	if err := p.Output.normalize(w); err != nil {
		return err
	}
	if p.Player != nil && strings.TrimSpace(p.Player.DisplayName) == "" {
		// The engine does not check player at all.
		w.add("player.displayName", "blank; the engine does not check it, leave Player nil for its default \"Player\"")
	}
	return validatePromptContext(w, p.InteractionMode, p.PromptScene, p.PromptDirective)
}

// validateAudioInput applies the engine's checks of event.audio: format,
// rate, channels and language refused as invalid_payload; empty data,
// partial samples, non-finite float samples and more than 30 s failed
// with request_failed once the engine decodes it.
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
	if size == 4 {
		for i := 0; i < len(a.Data); i += 4 {
			if f := math.Float32frombits(binary.LittleEndian.Uint32(a.Data[i:])); math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return fieldErr("event.audio.data", "sample %d is %v; the engine takes finite samples only", i/4, f)
			}
		}
	}
	return nil
}

// normalize applies Output's defaults and validates it. The engine
// refuses an unknown language or voice with unsupported_language or
// unsupported_voice once the request is queued; they are refused here
// before anything is sent.
func (o *Output) normalize(w *warnings) error {
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
		return rp.validate(w)
	}
	return nil
}

func (rp *ResponseProcessing) validate(w *warnings) error {
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
		if err := rules[i].validate(w, fmt.Sprintf("output.responseProcessing.rules[%d]", i), ids); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one rule as the engine does. It is a list of checks,
// hence its length.
func (r *Rule) validate(w *warnings, at string, ids map[string]bool) error {
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
	case r.Remove == "none" && len(r.RemoveFrom) > 0:
		return fieldErr(at+".removeFrom", "must be empty when remove is none")
	}
	ids[r.ID] = true
	if err := validateFlags(at+".matcher.flags", r.Matcher.Flags); err != nil {
		return err
	}
	if err := validateGroups(at, r.Matcher.Pattern, r.CaptureGroup); err != nil {
		return err
	}
	if r.RemoveFrom == nil {
		r.RemoveFrom = []string{}
	}
	if r.Remove != "none" && len(r.RemoveFrom) == 0 {
		// Refused here until issue #15; the engine accepts it and
		// extracts without removing anything.
		w.add(at+".removeFrom", "empty with remove %q: nothing is removed (use remove \"none\")", r.Remove)
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

// validateGroups applies the engine's capture-group rules: at most 16
// groups, and captureGroup must exist (0 is the whole match). The engine
// compiles the pattern as Rust regex; Go's RE2 parser counts groups the
// same way, and a pattern it cannot parse (Rust-only syntax) is left to
// the engine rather than refused.
func validateGroups(at, pattern string, group int) error {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	n := re.MaxCap()
	switch {
	case n > maxCaptureGroups:
		return fieldErr(at+".matcher.pattern", "%d capture groups, over %d", n, maxCaptureGroups)
	case group > n:
		return fieldErr(at+".captureGroup", "%d does not exist: the pattern has %d capture groups", group, n)
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

// validatePromptContext applies the engine's rules to the prompt context:
// the strings must be non-empty, and whitespace-only ones, which the
// engine accepts (measured, issue #15), are warnings.
func validatePromptContext(w *warnings, mode string, scene *PromptScene, dir *PromptDirective) error {
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
	if err := nonEmpty(w, "promptScene.", []string{"kind", "family", "label", "sceneLine"},
		[]string{scene.Kind, scene.Family, scene.Label, scene.SceneLine}); err != nil {
		return err
	}
	if math.IsNaN(scene.Priority) || math.IsInf(scene.Priority, 0) {
		return fieldErr("promptScene.priority", "must be a finite number")
	}
	if dir.ProtocolVersion < 1 {
		return fieldErr("promptDirective.protocolVersion", "%d; must be an integer >= 1", dir.ProtocolVersion)
	}
	if err := nonEmpty(w, "promptDirective.", []string{"sceneContext", "autoEventGuide", "directUserGuide"},
		[]string{dir.SceneContext, dir.AutoEventGuide, dir.DirectUserGuide}); err != nil {
		return err
	}
	if dir.PromptVersion != "" && strings.TrimSpace(dir.PromptVersion) == "" {
		// The engine trims this one (invalid_payload).
		return fieldErr("promptDirective.promptVersion", "must not be blank when set")
	}
	return nil
}

// nonEmpty refuses an empty value and warns about a whitespace-only one.
func nonEmpty(w *warnings, prefix string, names, values []string) error {
	for i, v := range values {
		switch {
		case v == "":
			return fieldErr(prefix+names[i], "must be a non-empty string")
		case strings.TrimSpace(v) == "":
			w.add(prefix+names[i], "whitespace only; the engine accepts it")
		}
	}
	return nil
}
