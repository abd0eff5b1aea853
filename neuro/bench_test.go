package neuro

import (
	"encoding/json"
	"testing"
)

// BenchmarkPipeline measures the SDK's own work for one incoming action:
// parse the message, parse and schema-validate the data, encode the result.
func BenchmarkPipeline(b *testing.B) {
	msg := []byte(`{"command":"action","data":{"id":"42","name":"place","data":"{\"cell\":5,\"mode\":\"fast\"}"}}`)
	sch, err := compileSchema("place", dataSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := parseIncoming(msg)
		if err != nil {
			b.Fatal(err)
		}
		a := v.(*actionMsg)
		if _, err := validateData(a.Name, sch, a.Data, a.HasData); err != nil {
			b.Fatal(err)
		}
		if _, err := encodeOut("Tic-Tac-Toe", cmdResult, resultData{ID: a.ID, Success: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseIncoming is the reference for BenchmarkPipeline: the
// envelope decode alone (encoding/json).
func BenchmarkParseIncoming(b *testing.B) {
	msg := []byte(`{"command":"action","data":{"id":"42","name":"place","data":"{\"cell\":5,\"mode\":\"fast\"}"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseIncoming(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateDataBad measures refusing off-schema data (error text
// included), the path malformed input takes.
func BenchmarkValidateDataBad(b *testing.B) {
	sch, err := compileSchema("place", dataSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := validateData("place", sch, `{"cell":12,"mode":"x"}`, true); err == nil {
			b.Fatal("accepted")
		}
	}
}

// BenchmarkDecodeArgs measures Invocation.Decode (whole numbers written
// with a fraction made integers first) on data that needs no rewrite and on
// data that does; BenchmarkUnmarshalArgs, plain encoding/json on the first,
// is the reference.
func BenchmarkDecodeArgs(b *testing.B) {
	type args struct {
		Cell int    `json:"cell"`
		Mode string `json:"mode"`
	}
	for _, data := range []string{`{"cell":5,"mode":"defensive"}`, `{"cell":5.0,"mode":"defensive"}`} {
		b.Run(data, func(b *testing.B) {
			raw := []byte(data)
			b.ReportAllocs()
			for b.Loop() {
				var a args
				if err := decodeArgs(raw, &a); err != nil || a.Cell != 5 {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUnmarshalArgs(b *testing.B) {
	type args struct {
		Cell int    `json:"cell"`
		Mode string `json:"mode"`
	}
	raw := []byte(`{"cell":5,"mode":"defensive"}`)
	b.ReportAllocs()
	for b.Loop() {
		var a args
		if err := json.Unmarshal(raw, &a); err != nil {
			b.Fatal(err)
		}
	}
}
