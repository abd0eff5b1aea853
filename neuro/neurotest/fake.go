package neurotest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
)

// fakeData generates a value matching a (simple) JSON schema, as Randy's
// json-schema-faker does: required properties always, optional ones half
// the time, enums, integer and number ranges, string lengths, arrays.
func fakeData(schema json.RawMessage, rng *rand.Rand) (string, bool) {
	if len(schema) == 0 {
		return "", false
	}
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return "", false
	}
	b, _ := json.Marshal(fakeValue(s, rng, 0))
	return string(b), true
}

func fakeValue(s map[string]any, rng *rand.Rand, depth int) any {
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[rng.IntN(len(e))]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[rng.IntN(len(ts))].(string)
	}
	switch typ {
	case "object":
		return fakeObject(s, rng, depth)
	case "integer":
		lo, hi := bound(s, "minimum", -100), bound(s, "maximum", 100)
		lo, hi = math.Ceil(lo), math.Floor(hi)
		if hi < lo {
			return int64(lo)
		}
		return int64(lo) + rng.Int64N(int64(hi-lo)+1)
	case "number":
		lo, hi := bound(s, "minimum", -100), bound(s, "maximum", 100)
		return lo + rng.Float64()*(hi-lo)
	case "boolean":
		return rng.IntN(2) == 0
	case "array":
		items, _ := s["items"].(map[string]any)
		lo, hi := int(bound(s, "minItems", 0)), int(bound(s, "maxItems", 3))
		if hi < lo {
			hi = lo
		}
		n := lo + rng.IntN(hi-lo+1)
		arr := make([]any, 0, n)
		for i := 0; i < n && depth < 8; i++ {
			arr = append(arr, fakeValue(items, rng, depth+1))
		}
		return arr
	case "null":
		return nil
	}
	lo, hi := int(bound(s, "minLength", 1)), int(bound(s, "maxLength", 8))
	if hi < lo {
		hi = lo
	}
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, lo+rng.IntN(hi-lo+1))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// fakeObject fills required properties always and optional ones half the
// time, in sorted order so that a seed reproduces the same value.
func fakeObject(s map[string]any, rng *rand.Rand, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, n := range r {
			if n, ok := n.(string); ok {
				req[n] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ps, _ := props[n].(map[string]any)
		if depth < 8 && (req[n] || rng.IntN(2) == 0) {
			out[n] = fakeValue(ps, rng, depth+1)
		}
	}
	return out
}

func bound(s map[string]any, k string, def float64) float64 {
	if v, ok := s[k].(float64); ok {
		return v
	}
	return def
}
