package neuro

import (
	"errors"
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
