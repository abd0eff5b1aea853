package neuro

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestSchema_JSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Schema
		want string
	}{
		{"object", Object(map[string]Schema{"cell": Integer().Range(1, 9)}, "cell"),
			`{"properties":{"cell":{"maximum":9,"minimum":1,"type":"integer"}},"required":["cell"],"type":"object"}`},
		{"wraps non-object root", Enum("a", "b"),
			`{"properties":{"value":{"enum":["a","b"]}},"required":["value"],"type":"object"}`},
		{"array of strings", Object(map[string]Schema{"tags": Array(String().Length(1, 5)).Items(1, 3)}),
			`{"properties":{"tags":{"items":{"maxLength":5,"minLength":1,"type":"string"},"maxItems":3,"minItems":1,"type":"array"}},"type":"object"}`},
		{"pattern bool number", Object(map[string]Schema{"b": Boolean(), "n": Number(), "s": String().Pattern("^[a-z]+$")}),
			`{"properties":{"b":{"type":"boolean"},"n":{"type":"number"},"s":{"pattern":"^[a-z]+$","type":"string"}},"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.s.JSON()
			testutil.Equal(t, "json", string(got), tt.want)
			_, err := compileSchema("a", got)
			testutil.Success(t, err)
			testutil.Equal(t, "lint", len(LintSchema(got)), 0)
		})
	}
}

var dataSchema = Object(map[string]Schema{
	"cell": Integer().Range(1, 9),
	"mode": Enum("fast", "slow"),
}, "cell").JSON()

var validateTests = []struct {
	name     string
	data     string
	has      bool
	wantErr  string // substring; "" means valid
	wantPath string
}{
	{"valid", `{"cell":5}`, true, "", ""},
	{"valid with enum", `{"cell":1,"mode":"slow"}`, true, "", ""},
	{"absent data validated as {}", "", false, "missing property", ""},
	{"malformed", `{"cell":`, true, "not valid JSON", ""},
	{"trailing garbage", `{"cell":1} x`, true, "not valid JSON", ""},
	{"empty string", ``, true, "not valid JSON", ""},
	{"above maximum", `{"cell":10}`, true, "maximum", "/cell"},
	{"not integer", `{"cell":1.5}`, true, "integer", "/cell"},
	{"bad enum", `{"cell":1,"mode":"medium"}`, true, "fast", "/mode"},
	{"not an object", `[1]`, true, "object", ""},
}

func Test_validateData(t *testing.T) {
	t.Parallel()
	sch, err := compileSchema("place", dataSchema)
	testutil.Success(t, err)
	for _, tt := range validateTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := validateData("place", sch, tt.data, tt.has)
			if tt.wantErr == "" {
				testutil.Success(t, err)
				testutil.Equal(t, "data", string(got), tt.data)
				return
			}
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DataError", err)
			}
			if !strings.Contains(de.Error(), tt.wantErr) {
				t.Errorf("error %q lacks %q", de.Error(), tt.wantErr)
			}
			testutil.Equal(t, "path", de.Path, tt.wantPath)
		})
	}
}

func Test_validateDataNoSchema(t *testing.T) {
	t.Parallel()
	got, err := validateData("pass", nil, "", false)
	testutil.Success(t, err)
	testutil.Equal(t, "absent", got == nil, true)
	got, err = validateData("pass", nil, `garbage`, true)
	testutil.Success(t, err) // the game asked for nothing; nothing to judge
	testutil.Equal(t, "ignored", got == nil, true)
}

func Test_compileSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema string
		ok           bool
	}{
		{"nil", ``, true},
		{"empty object", `{}`, true},
		{"object", `{"type":"object"}`, true},
		{"array root", `{"type":"array"}`, false},
		{"no type", `{"properties":{}}`, false},
		{"not json", `{`, false},
		{"external ref refused", `{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`, false},
		{"bad keyword value", `{"type":"object","minProperties":"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := compileSchema("a", json.RawMessage(tt.schema))
			if tt.ok {
				testutil.Success(t, err)
				return
			}
			var se *SchemaError
			testutil.ErrorAs(t, err, &se)
		})
	}
}
