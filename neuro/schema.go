package neuro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a JSON Schema node under construction. Build one with
// [Object], [String], [Integer], [Number], [Boolean], [Enum] or [Array],
// refine it with the methods (each returns s, modified), and turn it into
// an action schema with [Schema.JSON], whose root is always an object.
//
// A Schema is a plain map; it is not safe for concurrent modification.
type Schema map[string]any

// Object returns an object schema with the given properties, of which the
// names in required are required. It sets no additionalProperties, which
// the API lists as not well supported.
func Object(props map[string]Schema, required ...string) Schema {
	s := Schema{"type": "object"}
	if len(props) > 0 {
		p := make(map[string]any, len(props))
		for k, v := range props {
			p[k] = map[string]any(v)
		}
		s["properties"] = p
	}
	if len(required) > 0 {
		s["required"] = append([]string(nil), required...)
	}
	return s
}

// String returns {"type":"string"}.
func String() Schema { return Schema{"type": "string"} }

// Integer returns {"type":"integer"}.
func Integer() Schema { return Schema{"type": "integer"} }

// Number returns {"type":"number"}.
func Number() Schema { return Schema{"type": "number"} }

// Boolean returns {"type":"boolean"}.
func Boolean() Schema { return Schema{"type": "boolean"} }

// Enum returns {"enum": values}. Neuro picks one of the values.
func Enum[T any](values ...T) Schema {
	v := make([]any, len(values))
	for i := range values {
		v[i] = values[i]
	}
	return Schema{"enum": v}
}

// Array returns {"type":"array","items":items}.
func Array(items Schema) Schema {
	return Schema{"type": "array", "items": map[string]any(items)}
}

// Range sets "minimum" and "maximum" (inclusive).
func (s Schema) Range(min, max float64) Schema { s["minimum"] = min; s["maximum"] = max; return s }

// Length sets "minLength" and "maxLength" (strings, in characters).
func (s Schema) Length(min, max int) Schema { s["minLength"] = min; s["maxLength"] = max; return s }

// Items sets "minItems" and "maxItems" (arrays).
func (s Schema) Items(min, max int) Schema { s["minItems"] = min; s["maxItems"] = max; return s }

// Pattern sets "pattern", an ECMA-262 regular expression.
func (s Schema) Pattern(re string) Schema { s["pattern"] = re; return s }

// JSON encodes s as an action schema. A root that is not an object is
// wrapped as the single required property "value", because the API
// requires an object root.
func (s Schema) JSON() json.RawMessage {
	root := s
	if s["type"] != "object" {
		root = Object(map[string]Schema{"value": s}, "value")
	}
	b, err := json.Marshal(map[string]any(root))
	if err != nil { // only if a caller stored an unencodable value
		panic("neuro: schema not encodable: " + err.Error())
	}
	return b
}

// noLoader refuses every external reference: action schemas must be self
// contained, and a schema must never make the SDK read files or the web.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q not allowed", url)
}

// isEmptySchema reports whether raw is absent or {}.
func isEmptySchema(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(t, &m) == nil && len(m) == 0
}

// compileSchema checks and compiles an action's schema. It returns nil for
// an absent or empty schema.
func compileSchema(action string, raw json.RawMessage) (*jsonschema.Schema, error) {
	if isEmptySchema(raw) {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &SchemaError{Action: action, Reason: "not valid JSON: " + err.Error()}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, &SchemaError{Action: action, Reason: "not a JSON object"}
	}
	if m["type"] != "object" {
		return nil, &SchemaError{Action: action, Reason: `root must have "type": "object"`}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "neuro-action.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, &SchemaError{Action: action, Reason: err.Error()}
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, &SchemaError{Action: action, Reason: err.Error()}
	}
	return sch, nil
}

// validateData parses Neuro's data string and validates it against sch
// (nil: anything goes). Absent data is validated as {}. It returns the data
// as raw JSON, or a *DataError written for Neuro.
func validateData(action string, sch *jsonschema.Schema, data string, has bool) (json.RawMessage, error) {
	if !has {
		if sch == nil {
			return nil, nil
		}
		data = "{}"
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
	if err != nil {
		if sch == nil {
			// No schema: the game never asked for data; keep none.
			return nil, nil
		}
		return nil, &DataError{Action: action, Reason: "not valid JSON (" + err.Error() + "); send a JSON object"}
	}
	if sch == nil {
		return json.RawMessage(data), nil
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, dataErrorFrom(action, ve)
		}
		return nil, &DataError{Action: action, Reason: err.Error()}
	}
	return json.RawMessage(data), nil
}

// dataErrorFrom turns the library's error tree into one line: the first
// leaf error with its instance location, plus a count of the others.
func dataErrorFrom(action string, ve *jsonschema.ValidationError) *DataError {
	out := ve.BasicOutput()
	var msgs []string
	path := ""
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		if len(msgs) == 0 {
			path = u.InstanceLocation
			msgs = append(msgs, u.Error.String())
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		msgs = append(msgs, "at "+loc+": "+u.Error.String())
	}
	if len(msgs) == 0 {
		return &DataError{Action: action, Reason: ve.Error()}
	}
	const max = 3
	if len(msgs) > max {
		msgs = append(msgs[:max], fmt.Sprintf("and %d more", len(msgs)-max))
	}
	return &DataError{Action: action, Path: path, Reason: strings.Join(msgs, "; ")}
}
