package neuro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/internal/jsonstr"
)

// decodeArgs unmarshals schema-valid data into v. JSON Schema's "integer"
// accepts any number whose fraction is zero ({"slot":1.0}, 1e2), which
// encoding/json refuses for Go integers, so such numbers are first
// rewritten as integer literals (issue #19).
func decodeArgs(data []byte, v any) error {
	if len(data) == 0 {
		data = []byte("{}")
	}
	return json.Unmarshal(normalizeIntegers(data), v)
}

// normalizeIntegers rewrites every number written with a fraction or an
// exponent whose value is a whole number that fits in an int64 (1.0, -2e0,
// 0.5e1) as a plain integer literal. Anything else, and data that is not
// JSON, is returned unchanged.
func normalizeIntegers(data []byte) []byte {
	if !hasFractionOrExponent(data) {
		return data // the common case: no number needs it
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return data
	}
	changed := false
	v = mapNumbers(v, func(n json.Number) json.Number {
		if lit, ok := integralLiteral(string(n)); ok {
			changed = true
			return json.Number(lit)
		}
		return n
	})
	if !changed {
		return data
	}
	b, err := json.Marshal(v)
	if err != nil {
		return data
	}
	return b
}

// hasFractionOrExponent reports whether a number outside strings in data
// has a '.' or an exponent: outside strings a '.' occurs only in numbers,
// and an 'e' or 'E' right after a digit only in an exponent.
func hasFractionOrExponent(data []byte) bool {
	var strs jsonstr.Tracker
	for i, b := range data {
		switch {
		case !strs.Outside(b):
		case b == '.':
			return true
		case (b == 'e' || b == 'E') && i > 0 && data[i-1] >= '0' && data[i-1] <= '9':
			return true
		}
	}
	return false
}

// mapNumbers applies f to every number in a value decoded with UseNumber.
func mapNumbers(v any, f func(json.Number) json.Number) any {
	switch x := v.(type) {
	case json.Number:
		return f(x)
	case map[string]any:
		for k, e := range x {
			x[k] = mapNumbers(e, f)
		}
	case []any:
		for i, e := range x {
			x[i] = mapNumbers(e, f)
		}
	}
	return v
}

// integralLiteral returns the integer literal equal to the JSON number n
// when n has a fraction or an exponent, its value is whole, and it fits in
// an int64. It works on the decimal digits, so 1.0000000000000001 is not
// taken for 1.
func integralLiteral(n string) (string, bool) {
	if !strings.ContainsAny(n, ".eE") {
		return "", false
	}
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	mant, exp := n, 0
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		e, err := strconv.Atoi(n[i+1:])
		if err != nil {
			return "", false
		}
		mant, exp = n[:i], e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if strings.Trim(digits, "0") == "" {
		return "0", true
	}
	point := len(whole) + exp // digits[:point] is the integer part
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	digits = trimmed // now its first digit is not 0
	switch {
	case point <= 0 || point > 19:
		return "", false // a fraction, or more than int64 holds
	case point < len(digits):
		if strings.Trim(digits[point:], "0") != "" {
			return "", false
		}
		digits = digits[:point]
	default:
		digits += strings.Repeat("0", point-len(digits))
	}
	if neg {
		digits = "-" + digits
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(v, 10), true
}

// decodeError turns an error from decoding Neuro's (schema-valid) data
// into a *DataError written for her: where the data was wrong and what
// was expected, in JSON terms, never Go's.
func decodeError(action string, data []byte, err error) *DataError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		got := te.Value
		if got == "" {
			got = "a value"
		}
		return &DataError{Action: action, Path: pointerAt(normalizeIntegers(data), te.Offset),
			Reason: fmt.Sprintf("got %s, expected %s", got, describeType(te.Type))}
	}
	var ie *json.InvalidUnmarshalError
	if errors.As(err, &ie) {
		return &DataError{Action: action, Reason: "the game could not read it (a bug in the game, not in your data)"}
	}
	return &DataError{Action: action, Reason: err.Error()} // the game's own UnmarshalJSON
}

// describeType says in JSON terms what a Go type accepts.
func describeType(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1)
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return "an integer of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// pointerAt returns the JSON Pointer of the last value that starts before
// offset in data (encoding/json reports the offset just past the value it
// could not decode, without array indices in its field path).
func pointerAt(data []byte, offset int64) string {
	type frame struct {
		object bool
		key    string // object: the current member's name
		index  int    // array: the next element's index
		path   string
	}
	var stack []frame
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	last, wantKey := "", false
	for d.InputOffset() < offset {
		tok, err := d.Token()
		if err == io.EOF || err != nil {
			break
		}
		if delim, ok := tok.(json.Delim); ok && (delim == '}' || delim == ']') {
			stack = stack[:len(stack)-1]
			wantKey = len(stack) > 0 && stack[len(stack)-1].object
			continue
		}
		if wantKey {
			stack[len(stack)-1].key = tok.(string)
			wantKey = false
			continue
		}
		path := ""
		if n := len(stack); n > 0 {
			f := &stack[n-1]
			if f.object {
				path = f.path + "/" + escapePointer(f.key)
				wantKey = true
			} else {
				path = f.path + "/" + strconv.Itoa(f.index)
				f.index++
			}
		}
		last = path
		if delim, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{object: delim == '{', path: path})
			wantKey = delim == '{'
		}
	}
	return last
}
