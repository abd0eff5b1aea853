package enginetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Limits of output.responseProcessing as the engine enforces them
// (measured against the real engine, see docs/rpengine-protocol.md).
const (
	maxRules         = 8
	maxPatternBytes  = 1024
	maxCaptureGroups = 16
	maxMatches       = 64   // matches kept per rule with occurrence "all"
	maxCaptureBytes  = 4096 // longer captures are left out of extractedContent
)

var ruleIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)

// rule is one compiled responseProcessing rule.
type rule struct {
	id         string
	re         *regexp.Regexp
	group      int
	occurrence string // first, last or all
	remove     string // match, capture or none
	fromText   bool
	fromAudio  bool
}

// processing is a request's compiled output.responseProcessing (buffered
// mode): the engine sends no reply.text.delta and runs the rules over the
// whole reply before any of it leaves.
type processing struct{ rules []rule }

// parseProcessing checks output.responseProcessing the way the engine's
// envelope decoder does, in its order and with its messages, and compiles
// the rules. raw nil means absent (no processing). Go's regexp stands in
// for the engine's Rust regex crate: both take RE2 syntax, so a pattern
// one refuses the other almost always refuses too.
func parseProcessing(raw json.RawMessage) (*processing, error) {
	if raw == nil {
		return nil, nil
	}
	o, ok := object(raw)
	if !ok {
		return nil, errors.New("output.responseProcessing must be an object")
	}
	if mode, _ := str(o["mode"]); mode != "buffered" {
		return nil, errors.New(`output.responseProcessing.mode must be "buffered"`)
	}
	var rules []json.RawMessage
	if json.Unmarshal(o["rules"], &rules) != nil || rules == nil {
		return nil, errors.New("output.responseProcessing.rules must be an array")
	}
	if len(rules) < 1 || len(rules) > maxRules {
		return nil, fmt.Errorf("output.responseProcessing.rules must contain between 1 and %d rules", maxRules)
	}
	p := &processing{}
	ids := map[string]bool{}
	for _, raw := range rules {
		r, err := parseRule(raw, ids)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// parseRule checks and compiles one rule; it is a sequence of the
// engine's checks, hence its length.
func parseRule(raw json.RawMessage, ids map[string]bool) (rule, error) {
	var r rule
	m, ok := object(raw)
	if !ok {
		return r, errors.New("each responseProcessing rule must be an object")
	}
	field := func(m map[string]json.RawMessage, key string) (string, error) {
		s, ok := str(m[key])
		if !ok {
			return "", fmt.Errorf("responseProcessing rule requires %s", key)
		}
		return s, nil
	}
	var err error
	if r.id, err = field(m, "id"); err != nil {
		return r, err
	}
	if !ruleIDPattern.MatchString(r.id) {
		return r, errors.New("responseProcessing rule id must match ^[a-z][a-z0-9_.-]{0,63}$")
	}
	if ids[r.id] {
		return r, fmt.Errorf("duplicate responseProcessing rule id: %s", r.id)
	}
	ids[r.id] = true
	matcher, ok := object(m["matcher"])
	if !ok {
		return r, errors.New("responseProcessing rule requires matcher")
	}
	if typ, _ := str(matcher["type"]); typ != "regex" {
		return r, errors.New(`responseProcessing matcher.type must be "regex"`)
	}
	pattern, err := field(matcher, "pattern")
	if err != nil {
		return r, err
	}
	if len(pattern) == 0 || len(pattern) > maxPatternBytes {
		return r, fmt.Errorf("responseProcessing regex pattern must contain between 1 and %d bytes", maxPatternBytes)
	}
	flags, err := parseFlags(matcher["flags"])
	if err != nil {
		return r, err
	}
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	if r.re, err = regexp.Compile(pattern); err != nil {
		return r, fmt.Errorf("invalid responseProcessing regex for %s: %v", r.id, err)
	}
	if r.re.NumSubexp() > maxCaptureGroups {
		return r, fmt.Errorf("responseProcessing regex for %s has more than %d capture groups", r.id, maxCaptureGroups)
	}
	var group uint64
	if json.Unmarshal(m["captureGroup"], &group) != nil {
		return r, errors.New("responseProcessing rule requires a non-negative integer captureGroup")
	}
	if group > uint64(r.re.NumSubexp()) {
		return r, fmt.Errorf("responseProcessing captureGroup %d does not exist for %s", group, r.id)
	}
	r.group = int(group)
	if r.occurrence, err = field(m, "occurrence"); err != nil {
		return r, err
	}
	if !slices.Contains([]string{"first", "last", "all"}, r.occurrence) {
		return r, errors.New("responseProcessing occurrence must be first, last, or all")
	}
	if r.remove, err = field(m, "remove"); err != nil {
		return r, err
	}
	if !slices.Contains([]string{"match", "capture", "none"}, r.remove) {
		return r, errors.New("responseProcessing remove must be match, capture, or none")
	}
	return r, parseRemoveFrom(&r, m["removeFrom"])
}

// parseFlags checks matcher.flags: absent, or a string of distinct
// letters from "ims". An array such as ["i"] is refused, as the engine
// refuses it (issue #15).
func parseFlags(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", nil
	}
	flags, ok := str(raw)
	if !ok || strings.Trim(flags, "ims") != "" {
		return "", errors.New("responseProcessing regex flags may only contain i, m, and s")
	}
	for i, c := range flags {
		if strings.ContainsRune(flags[i+1:], c) {
			return "", errors.New("responseProcessing regex flags cannot contain duplicates")
		}
	}
	return flags, nil
}

func parseRemoveFrom(r *rule, raw json.RawMessage) error {
	var targets []json.RawMessage
	if json.Unmarshal(raw, &targets) != nil || targets == nil {
		return errors.New("responseProcessing rule requires removeFrom")
	}
	for _, t := range targets {
		s, _ := str(t)
		switch {
		case s == "text" && !r.fromText:
			r.fromText = true
		case s == "audio" && !r.fromAudio:
			r.fromAudio = true
		case s == "text" || s == "audio":
			return errors.New("responseProcessing removeFrom cannot contain duplicates")
		default:
			return errors.New("responseProcessing removeFrom may only contain text and audio")
		}
	}
	if r.remove == "none" && len(targets) > 0 {
		return errors.New("responseProcessing removeFrom must be empty when remove is none")
	}
	return nil
}

// apply runs the rules over the whole reply source as the engine does:
// every rule sees the unmodified source, captures of at most 4096 bytes
// are collected per rule id (an empty list when nothing matched), and the
// selected spans are removed from the text and the speech.
func (p *processing) apply(source string) (text, audio string, extracted map[string][]string) {
	extracted = make(map[string][]string, len(p.rules))
	var textSpans, audioSpans [][2]int
	for _, r := range p.rules {
		values := []string{}
		for _, m := range r.matches(source) {
			if c := m[2*r.group]; c >= 0 && m[2*r.group+1]-c <= maxCaptureBytes {
				values = append(values, source[c:m[2*r.group+1]])
			}
			span := [2]int{-1, -1}
			switch r.remove {
			case "match":
				span = [2]int{m[0], m[1]}
			case "capture":
				span = [2]int{m[2*r.group], m[2*r.group+1]}
			}
			if span[0] < 0 {
				continue
			}
			if r.fromText {
				textSpans = append(textSpans, span)
			}
			if r.fromAudio {
				audioSpans = append(audioSpans, span)
			}
		}
		extracted[r.id] = values
	}
	return removeSpans(source, textSpans), removeSpans(source, audioSpans), extracted
}

// matches returns the submatch indexes of the occurrences the rule selects.
func (r rule) matches(source string) [][]int {
	all := r.re.FindAllStringSubmatchIndex(source, -1)
	switch {
	case len(all) == 0:
		return nil
	case r.occurrence == "first":
		return all[:1]
	case r.occurrence == "last":
		return all[len(all)-1:]
	}
	return all[:min(len(all), maxMatches)]
}

// removeSpans removes the (possibly overlapping) byte spans from s.
func removeSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var out strings.Builder
	off := 0
	for _, sp := range spans {
		if sp[0] > off {
			out.WriteString(s[off:sp[0]])
		}
		off = max(off, sp[1])
	}
	out.WriteString(s[off:])
	return out.String()
}
