package neuro

import (
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseIncoming checks that no message crashes the parser, and that an
// error is always a *ProtocolError.
func FuzzParseIncoming(f *testing.F) {
	for _, tt := range incomingTests {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte(`{"command":"action","data":{"id":"1","name":"x","data":"\ud800"}}`))
	f.Add([]byte(`{"command":"startup","data":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseIncoming(b)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ProtocolError", err, err)
			}
		}
		if a, ok := v.(*actionMsg); ok && a.ID == "" {
			t.Fatalf("action without id returned: %#v", a)
		}
	})
}

// FuzzValidateData checks that any data string is either accepted as
// schema-valid JSON or refused with a *DataError, never a crash.
func FuzzValidateData(f *testing.F) {
	for _, tt := range validateTests {
		f.Add(tt.data, tt.has)
	}
	f.Add(`{"cell":1e400}`, true)
	f.Add(`{"cell":5,"cell":6}`, true)
	f.Add("\x00", true)
	sch, err := compileSchema("place", dataSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string, has bool) {
		got, err := validateData("place", sch, data, has)
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) || de.Action != "place" {
				t.Fatalf("error %v (%T) is not a *DataError for place", err, err)
			}
			return
		}
		if has && string(got) != data {
			t.Fatalf("accepted data changed: %q -> %q", data, got)
		}
	})
}

// FuzzIntegralLiteral checks the whole-number rewrite of Invocation.Decode
// against math/big on any JSON number: a literal is returned exactly when
// the number has a fraction or an exponent and its value is an integer
// that fits in an int64, and the literal is that integer. Issue #19.
func FuzzIntegralLiteral(f *testing.F) {
	for _, s := range []string{"1.0", "-2.00", "1e2", "0.5e1", "1.5", "1e19", "-0.0", "9.223372036854775807e18", "7", "1E-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || s == "" || strings.TrimSpace(s) != s || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			return // not a number
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(s[i+1:]); err != nil || e > 400 || e < -400 {
				return // math/big would build a huge number; the rewrite refuses it anyway
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("math/big cannot read %q", s)
		}
		want := r.IsInt() && r.Num().IsInt64() && strings.ContainsAny(s, ".eE")
		lit, got := integralLiteral(s)
		if got != want {
			t.Fatalf("integralLiteral(%q) ok = %v, want %v", s, got, want)
		}
		if got && lit != r.Num().String() {
			t.Fatalf("integralLiteral(%q) = %q, want %s", s, lit, r.Num())
		}
	})
}
