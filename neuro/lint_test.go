package neuro

import (
	"encoding/json"
	"slices"
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
	m := map[string]any{"type": "object"}
	for k := range unsupportedKeywords {
		m[k] = 1
	}
	b, _ := json.Marshal(m)
	n := 0
	for _, f := range LintSchema(b) {
		if f.Key == "prot/schema/unsupported_keywords" {
			n++
		}
	}
	testutil.Equal(t, "unsupported keywords flagged", n, 33)
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
		name string
		ok   bool
	}{
		{"join_friend_lobby", true}, {"use-item", true}, {"slot2", true},
		{"", false}, {"Use", false}, {"a b", false}, {"_a", false}, {"a_", false}, {"a__b", false}, {"ä", false},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v", tt.name, err)
		}
		if err != nil {
			var ne *NameError
			testutil.ErrorAs(t, err, &ne)
		}
	}
}
