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

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Outbound validation (issue #15). Every rule here is at most as strict
// as the engine: a request refused here would be refused by the engine
// too, as invalid_payload or as a request.error once queued
// (unsupported_language, unsupported_voice, request_failed for audio it
// cannot decode). Where this package used to be stricter, the rule is now
// a warning, logged when the request is sent: see docs/rpengine-design.md,
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
		return fieldErr("IntegrationID", "required")
	case characterID == "":
		return fieldErr("CharacterID", "required")
	case c == nil:
		return fieldErr("Card", "required")
	}
	if err := c.Validate(); err != nil {
		return &fieldCause{FieldError{Field: "Card", Reason: errd.Text(err, "card: ")}, err}
	}
	return nil
}

// fieldCause is a *FieldError whose reason is another error, which stays
// reachable (errors.As finds the card's *card.ValidationError).
type fieldCause struct {
	FieldError
	cause error
}

func (e *fieldCause) Unwrap() []error { return []error{&e.FieldError, e.cause} }

// common is what a ReplyRequest and a CaptureRequest share.
type common struct {
	integrationID, characterID string
	card                       *card.Card
	requestID, eventID         string
	language, voice, profile   string
	rules                      []Rule
	playerName                 string
	prompt                     *Prompt
}

// payload builds and validates the wire form of a reply request.
func (r *ReplyRequest) payload() (*requestPayload, warnings, error) {
	c := common{r.IntegrationID, r.CharacterID, r.Card, r.RequestID, r.EventID, r.Language, r.Voice, r.AudioProfile, r.Rules, r.PlayerName, r.Prompt}
	if err := validateTarget(c.integrationID, c.characterID, c.card); err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(r.Text) == "" && len(r.Speech) == 0 && len(r.SpeechFloat) == 0 {
		return nil, nil, fieldErr("Text", "blank, and no Speech: the event needs one or both")
	}
	p := &requestPayload{Event: &eventPayload{Text: r.Text}}
	a, err := speech(r.Speech, r.SpeechFloat)
	switch {
	case err != nil:
		return nil, nil, err
	case a != nil:
		a.Language = r.SpeechLanguage
		p.Event.Audio = a
	case r.SpeechLanguage != "":
		return nil, nil, fieldErr("SpeechLanguage", "set without Speech")
	}
	if l := r.SpeechLanguage; l != "" && !slices.Contains(inputLanguages, l) {
		return nil, nil, fieldErr("SpeechLanguage", "%q is not one of %v", l, inputLanguages)
	}
	var w warnings
	return p, w, c.fill(p, &w)
}

// payload builds and validates the wire form of a voice capture.
func (r *CaptureRequest) payload() (*requestPayload, warnings, error) {
	c := common{r.IntegrationID, r.CharacterID, r.Card, r.RequestID, r.EventID, r.Language, r.Voice, r.AudioProfile, r.Rules, r.PlayerName, r.Prompt}
	if err := validateTarget(c.integrationID, c.characterID, c.card); err != nil {
		return nil, nil, err
	}
	p := &requestPayload{}
	if r.Transcript {
		p.ReturnTranscript = &r.Transcript
	}
	if r.KeepListening {
		p.SilenceBehavior = "restart"
	}
	var w warnings
	return p, w, c.fill(p, &w)
}

// speech builds event.audio from the request's speech, s16 or f32 (nil
// without either), as the engine takes it: at most 30 s and, as floats,
// finite (else request_failed; docs/rpengine-protocol.md). Each is encoded
// as it is, little-endian: pcm_s16le or pcm_f32le.
func speech(s16 []int16, f32 []float32) (*audioPayload, error) {
	a := &audioPayload{SampleRate: inputSampleRate, Channels: 1}
	field, n := "Speech", len(s16)
	if len(f32) > 0 {
		field, n = "SpeechFloat", len(f32)
	}
	switch {
	case len(s16) > 0 && len(f32) > 0:
		return nil, fieldErr("SpeechFloat", "set with Speech: give one of the two")
	case n > maxAudioInputSeconds*inputSampleRate:
		return nil, fieldErr(field, "%.1f s, over the 30 s limit", float64(n)/inputSampleRate)
	case len(s16) > 0:
		a.Format, a.Data = "pcm_s16le", make([]byte, 2*n)
		for i, v := range s16 {
			binary.LittleEndian.PutUint16(a.Data[2*i:], uint16(v))
		}
	case len(f32) > 0:
		a.Format, a.Data = "pcm_f32le", make([]byte, 4*n)
		for i, v := range f32 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fieldErr(fmt.Sprintf("SpeechFloat[%d]", i), "%v is not a finite number", v)
			}
			binary.LittleEndian.PutUint32(a.Data[4*i:], math.Float32bits(v))
		}
	default:
		return nil, nil
	}
	return a, nil
}

// fill puts the shared fields into p, with generated ids and defaults,
// and validates them.
func (c *common) fill(p *requestPayload, w *warnings) error {
	p.RequestID, p.EventID = c.requestID, c.eventID
	p.IntegrationID, p.CharacterID = c.integrationID, c.characterID
	if p.RequestID == "" {
		p.RequestID = "req-" + wire.NewID()
	}
	if p.EventID == "" {
		p.EventID = "evt-" + wire.NewID()
	}
	if err := c.output(&p.Output, w); err != nil {
		return err
	}
	switch n := c.playerName; {
	case n == "":
	case strings.TrimSpace(n) == "":
		// The engine does not check player at all.
		w.add("PlayerName", "blank; the engine takes it as it is (leave it empty for its default, \"Player\")")
		fallthrough
	default:
		p.Player = &playerPayload{DisplayName: n}
	}
	return c.promptContext(p, w)
}

// output builds the output field. The engine refuses an unknown language
// or voice with unsupported_language or unsupported_voice once the
// request is queued; they are refused here before anything is sent.
func (c *common) output(o *outputPayload, w *warnings) error {
	o.Language, o.Modalities = c.language, []string{"text"}
	if o.Language == "" {
		o.Language = "en"
	}
	if !slices.Contains(outputLanguages, o.Language) {
		return fieldErr("Language", "%q is not a supported reply language", o.Language)
	}
	switch {
	case c.voice != "":
		if !slices.Contains(voices, c.voice) {
			return fieldErr("Voice", "%q is not F1-F5 or M1-M5", c.voice)
		}
		o.Modalities = append(o.Modalities, "audio")
		o.Audio = &outputAudio{Model: speechModel, Voice: c.voice}
		switch c.profile {
		case "":
		case "narrowband_voice", "cinematic_radio":
			o.Audio.Processing = &audioProcessingWire{Profile: c.profile}
		default:
			return fieldErr("AudioProfile", "%q is not narrowband_voice or cinematic_radio", c.profile)
		}
	case c.profile != "":
		return fieldErr("AudioProfile", "set without Voice (a text-only reply)")
	}
	if len(c.rules) == 0 {
		return nil
	}
	if len(c.rules) > maxRules {
		return fieldErr("Rules", "%d rules; at most 8 are allowed", len(c.rules))
	}
	rp := &processingPayload{Mode: "buffered", Rules: make([]rulePayload, len(c.rules))}
	ids := map[string]bool{}
	for i := range c.rules {
		if err := c.rules[i].payload(&rp.Rules[i], fmt.Sprintf("Rules[%d]", i), ids); err != nil {
			return err
		}
	}
	o.ResponseProcessing = rp
	return nil
}

// payload builds a rule's wire form and checks it as the engine does. It
// is a list of checks, hence its length.
func (r *Rule) payload(p *rulePayload, at string, ids map[string]bool) error {
	*p = rulePayload{ID: r.ID, Matcher: matcherPayload{Type: "regex", Pattern: r.Pattern, Flags: r.Flags},
		CaptureGroup: r.Group, Occurrence: r.Occurrence, Remove: r.Remove, RemoveFrom: r.RemoveFrom}
	if p.Occurrence == "" {
		p.Occurrence = "first"
	}
	if p.Remove == "" {
		p.Remove = "none"
	}
	switch {
	case !ruleID.MatchString(r.ID):
		return fieldErr(at+".ID", "%q does not match ^[a-z][a-z0-9_.-]{0,63}$", r.ID)
	case ids[r.ID]:
		return fieldErr(at+".ID", "duplicate %q", r.ID)
	case r.Pattern == "":
		return fieldErr(at+".Pattern", "empty")
	case len(r.Pattern) > maxPatternBytes:
		return fieldErr(at+".Pattern", "%d bytes, over 1024", len(r.Pattern))
	case r.Group < 0:
		return fieldErr(at+".Group", "%d is negative", r.Group)
	case p.Occurrence != "first" && p.Occurrence != "last" && p.Occurrence != "all":
		return fieldErr(at+".Occurrence", "%q is not first, last or all", r.Occurrence)
	case p.Remove != "match" && p.Remove != "capture" && p.Remove != "none":
		return fieldErr(at+".Remove", "%q is not none, match or capture", r.Remove)
	case p.Remove == "none" && len(r.RemoveFrom) > 0:
		return fieldErr(at+".RemoveFrom", "must be empty when Remove is none")
	}
	ids[r.ID] = true
	if err := validateFlags(at+".Flags", r.Flags); err != nil {
		return err
	}
	if err := validateGroups(at, r.Pattern, r.Group); err != nil {
		return err
	}
	switch {
	case p.Remove == "none":
		p.RemoveFrom = []string{}
	case len(p.RemoveFrom) == 0:
		p.RemoveFrom = []string{"text", "audio"}
	}
	return uniqueSubset(at+".RemoveFrom", p.RemoveFrom, "text", "audio")
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
		return fieldErr(at+".Pattern", "%d capture groups, over %d", n, maxCaptureGroups)
	case group > n:
		return fieldErr(at+".Group", "%d does not exist: the pattern has %d capture groups", group, n)
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

// promptContext puts the prompt context into p and applies the engine's
// rules to it: the strings must be non-empty, and whitespace-only ones,
// which the engine accepts (measured, issue #15), are warnings.
func (c *common) promptContext(p *requestPayload, w *warnings) error {
	pr := c.prompt
	if pr == nil {
		return nil
	}
	p.InteractionMode = pr.Mode
	if p.InteractionMode == "" {
		p.InteractionMode = "direct_user"
	}
	if p.InteractionMode != "auto_event" && p.InteractionMode != "direct_user" {
		return fieldErr("Prompt.Mode", "%q is not direct_user or auto_event", pr.Mode)
	}
	if err := nonEmpty(w, "Prompt.", []string{"Kind", "Family", "Label", "SceneLine", "SceneContext", "AutoEventGuide", "DirectUserGuide"},
		[]string{pr.Kind, pr.Family, pr.Label, pr.SceneLine, pr.SceneContext, pr.AutoEventGuide, pr.DirectUserGuide}); err != nil {
		return err
	}
	if math.IsNaN(pr.Priority) || math.IsInf(pr.Priority, 0) {
		return fieldErr("Prompt.Priority", "must be a finite number")
	}
	version := pr.DirectiveVersion
	switch {
	case version == 0:
		version = 1
	case version < 0:
		return fieldErr("Prompt.DirectiveVersion", "%d is negative", version)
	}
	if pr.Version != "" && strings.TrimSpace(pr.Version) == "" {
		// The engine trims this one (invalid_payload).
		return fieldErr("Prompt.Version", "must not be blank when set")
	}
	p.PromptScene = &scenePayload{Kind: pr.Kind, Family: pr.Family, Label: pr.Label, SceneLine: pr.SceneLine, Priority: pr.Priority}
	p.PromptDirective = &directivePayload{ProtocolVersion: version, SceneContext: pr.SceneContext,
		AutoEventGuide: pr.AutoEventGuide, DirectUserGuide: pr.DirectUserGuide, PromptVersion: pr.Version}
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
