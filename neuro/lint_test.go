package neuro

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestLintSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		want   []string // "key path"
	}{
		{"omitted", ``, nil},
		{"empty", `{}`, []string{"prot/schema/prefer_omit_to_empty "}},
		{"root not object", `{"type":"string"}`, []string{"prot/schema/type_object "}},
		{"not json", `{`, []string{"prot/schema/invalid_json "}},
		{"array root", `[]`, []string{"prot/schema/type_object "}},
		{"unsupported nested", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","description":"x"},"title":{"type":"string"}}}`,
			[]string{"prot/schema/unsupported_keywords /additionalProperties", "prot/schema/unsupported_keywords /properties/a/description"}},
		{"unique items", `{"type":"object","properties":{"l":{"type":"array","uniqueItems":true,"items":{"oneOf":[{"type":"string"}]}}}}`,
			[]string{"prot/schema/unsupported_keywords /properties/l/items/oneOf", "prot/schema/unique_items /properties/l/uniqueItems"}},
		{"inside combinators", `{"type":"object","properties":{"p":{"anyOf":[{"type":"string","title":"t"}],"not":{"$comment":"c"}}}}`,
			[]string{"prot/schema/unsupported_keywords /properties/p/anyOf", "prot/schema/unsupported_keywords /properties/p/anyOf/0/title",
				"prot/schema/unsupported_keywords /properties/p/not", "prot/schema/unsupported_keywords /properties/p/not/$comment"}},
		{"escaped pointer", `{"type":"object","properties":{"a/b":{"$ref":"#"}}}`, []string{"prot/schema/unsupported_keywords /properties/a~1b/$ref"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range LintSchema(json.RawMessage(tt.schema)) {
				got = append(got, f.Key+" "+f.Path)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLintSchema_all33(t *testing.T) {
	t.Parallel()
	// The list as the API spec gives it, spelled out here rather than read
	// from unsupportedKeywords, so that a misspelt or missing entry fails.
	spec := []string{"$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef",
		"$id", "$ref", "$schema", "$vocabulary", "additionalProperties", "allOf",
		"anyOf", "contentEncoding", "contentMediaType", "contentSchema",
		"dependentRequired", "dependentSchemas", "deprecated", "description",
		"else", "if", "maxProperties", "minProperties", "multipleOf", "not",
		"oneOf", "patternProperties", "readOnly", "then", "title",
		"unevaluatedItems", "unevaluatedProperties", "writeOnly"}
	testutil.Equal(t, "spec list", len(spec), 33)
	m := map[string]any{"type": "object"}
	for _, k := range spec {
		m[k] = 1
	}
	b, _ := json.Marshal(m)
	var flagged []string
	for _, f := range LintSchema(b) {
		if f.Key == "prot/schema/unsupported_keywords" {
			flagged = append(flagged, f.Path[1:])
		}
	}
	slices.Sort(flagged)
	slices.Sort(spec)
	if !slices.Equal(flagged, spec) {
		t.Errorf("flagged %q, want %q", flagged, spec)
	}
}

func TestLintAction(t *testing.T) {
	t.Parallel()
	var keys []string
	for _, f := range LintAction(Action{Name: "Bad", Schema: json.RawMessage(`{}`)}) {
		keys = append(keys, f.Key)
	}
	want := []string{"prot/action/invalid_name", "prot/action/no_desc", "prot/schema/prefer_omit_to_empty"}
	if !slices.Equal(keys, want) {
		t.Errorf("got %q, want %q", keys, want)
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ok     bool
		reason string // substring of NameError.Reason when !ok
	}{
		{"join_friend_lobby", true, ""}, {"use-item", true, ""}, {"slot2", true, ""},
		{"", false, "empty"}, {"Use", false, "lowercase"}, {"a b", false, "only a-z"},
		{"_a", false, "separator"}, {"a_", false, "ends with"}, {"a__b", false, "doubled"}, {"ä", false, "only a-z"},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v", tt.name, err)
		}
		if err != nil {
			var ne *NameError
			testutil.ErrorAs(t, err, &ne)
			if !strings.Contains(ne.Reason, tt.reason) {
				t.Errorf("CheckName(%q) reason %q lacks %q", tt.name, ne.Reason, tt.reason)
			}
		}
	}
}
