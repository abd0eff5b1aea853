package neuro

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Severity ranks a [Finding].
type Severity int

// Severities, as the Gary conformance tool uses them.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityError
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "info"
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Finding is one problem reported by [LintSchema], [LintAction] or a
// [Checker]. Key is stable (tests may match on it) and follows the Gary
// conformance tool's naming where one exists ("prot/startup/missing",
// "prot/force/multiple", "prot/schema/prefer_omit_to_empty", ...).
type Finding struct {
	Key      string // stable, e.g. "prot/force/multiple"
	Severity Severity
	Action   string // the action concerned, if any
	Path     string // JSON Pointer into the schema, if any
	Message  string
}

// String formats the finding on one line.
func (f Finding) String() string {
	s := f.Severity.String() + " " + f.Key
	if f.Action != "" {
		s += " [" + f.Action + "]"
	}
	if f.Path != "" {
		s += " at " + f.Path
	}
	return s + ": " + f.Message
}

// unsupportedKeywords are the 33 keywords the API says are "probably not
// supported well".
var unsupportedKeywords = map[string]bool{
	"$anchor": true, "$comment": true, "$defs": true, "$dynamicAnchor": true,
	"$dynamicRef": true, "$id": true, "$ref": true, "$schema": true,
	"$vocabulary": true, "additionalProperties": true, "allOf": true,
	"anyOf": true, "contentEncoding": true, "contentMediaType": true,
	"contentSchema": true, "dependentRequired": true, "dependentSchemas": true,
	"deprecated": true, "description": true, "else": true, "if": true,
	"maxProperties": true, "minProperties": true, "multipleOf": true,
	"not": true, "oneOf": true, "patternProperties": true, "readOnly": true,
	"then": true, "title": true, "unevaluatedItems": true,
	"unevaluatedProperties": true, "writeOnly": true,
}

// LintSchema reports problems with an action schema: a root that is not
// an object ("prot/schema/type_object"), {} instead of omitting the schema
// ("prot/schema/prefer_omit_to_empty"), each unsupported keyword
// ("prot/schema/unsupported_keywords", warning) and uniqueItems
// ("prot/schema/unique_items", warning: unknown whether Neuro honours it).
// A nil schema has no findings.
func LintSchema(schema json.RawMessage) []Finding {
	return lintSchema("", schema)
}

// LintAction is [LintSchema] plus the action's name ([CheckName]:
// "prot/action/invalid_name") and description ("prot/action/no_desc").
func LintAction(a Action) []Finding {
	var fs []Finding
	if err := CheckName(a.Name); err != nil {
		fs = append(fs, Finding{Key: "prot/action/invalid_name", Severity: SeverityError, Action: a.Name, Message: err.Error()})
	}
	if a.Description == "" {
		fs = append(fs, Finding{Key: "prot/action/no_desc", Severity: SeverityWarning, Action: a.Name,
			Message: "Neuro reads the description to decide when to use the action"})
	}
	return append(fs, lintSchema(a.Name, a.Schema)...)
}

func lintSchema(action string, raw json.RawMessage) []Finding {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []Finding{{Key: "prot/schema/invalid_json", Severity: SeverityError, Action: action, Message: err.Error()}}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return []Finding{{Key: "prot/schema/type_object", Severity: SeverityError, Action: action, Message: "the schema must be a JSON object"}}
	}
	if len(m) == 0 {
		return []Finding{{Key: "prot/schema/prefer_omit_to_empty", Severity: SeverityWarning, Action: action,
			Message: "{} accepts anything; omit the schema for an action without parameters"}}
	}
	var fs []Finding
	if m["type"] != "object" {
		fs = append(fs, Finding{Key: "prot/schema/type_object", Severity: SeverityError, Action: action,
			Message: `the root must have "type": "object"`})
	}
	l := linter{action: action, fs: fs}
	l.walk("", m)
	return l.fs
}

type linter struct {
	action string
	fs     []Finding
}

// walk visits a schema object; only keys in keyword position are checked,
// so a property named "title" is not flagged.
func (l *linter) walk(path string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "/" + escapePointer(k)
		switch {
		case unsupportedKeywords[k]:
			l.add("prot/schema/unsupported_keywords", SeverityWarning, p, fmt.Sprintf("%q is probably not supported well by Neuro; validate it game-side instead", k))
		case k == "uniqueItems":
			l.add("prot/schema/unique_items", SeverityWarning, p, "unknown whether Neuro honours uniqueItems; check for duplicates game-side too")
		}
		l.descend(p, k, m[k])
	}
}

func (l *linter) descend(p, k string, v any) {
	switch k {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		if mm, ok := v.(map[string]any); ok {
			names := make([]string, 0, len(mm))
			for n := range mm {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if sm, ok := mm[n].(map[string]any); ok {
					l.walk(p+"/"+escapePointer(n), sm)
				}
			}
		}
	case "items", "contains", "not", "additionalProperties", "if", "then", "else",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema":
		if sm, ok := v.(map[string]any); ok {
			l.walk(p, sm)
		}
	case "allOf", "anyOf", "oneOf", "prefixItems":
		if arr, ok := v.([]any); ok {
			for i, e := range arr {
				if sm, ok := e.(map[string]any); ok {
					l.walk(fmt.Sprintf("%s/%d", p, i), sm)
				}
			}
		}
	}
}

func (l *linter) add(key string, sev Severity, path, msg string) {
	l.fs = append(l.fs, Finding{Key: key, Severity: sev, Action: l.action, Path: path, Message: msg})
}

func escapePointer(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
