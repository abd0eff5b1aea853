package card

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// edit parses the minimal card, applies the patch with the strict applier
// and parses the result.
func edit(t *testing.T, base []byte, patch string) *Card {
	t.Helper()
	out, err := ApplyPatch(base, []byte(patch))
	testutil.Success(t, err)
	c, err := Parse(out)
	testutil.Success(t, err)
	return c
}

func violations(err error) []string {
	ve, ok := err.(*ValidationError)
	if !ok {
		return nil
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.Pointer)
	}
	return out
}

func TestCard_Validate(t *testing.T) {
	t.Parallel()
	minimal := readCard(t, "minimal.json")
	book := `{"op":"add","path":"/data/character_book","value":{"extensions":{},"entries":[{"keys":["a"],"content":"c","extensions":{},"enabled":true,"insertion_order":1}]}}`
	tests := []struct {
		name, patch string
		want        []string
	}{
		{"valid", `[]`, nil},
		{"valid with book", `[` + book + `]`, nil},
		{"spec", `[{"op":"replace","path":"/spec","value":"chara_card_v3"}]`, []string{"/spec"}},
		{"spec_version number", `[{"op":"replace","path":"/spec_version","value":2}]`, []string{"/spec_version"}},
		{"no data", `[{"op":"remove","path":"/data"}]`, []string{"/data"}},
		{"data array", `[{"op":"replace","path":"/data","value":[]}]`, []string{"/data"}},
		{"blank name", `[{"op":"replace","path":"/data/name","value":" \t\n"}]`, []string{"/data/name"}},
		{"every string missing", `[{"op":"replace","path":"/data","value":{"name":"x","alternate_greetings":[],"tags":[],"extensions":{}}}]`,
			[]string{"/data/description", "/data/personality", "/data/scenario", "/data/first_mes", "/data/mes_example", "/data/creator_notes", "/data/system_prompt", "/data/post_history_instructions", "/data/creator", "/data/character_version"}},
		{"name null", `[{"op":"replace","path":"/data/name","value":null}]`, []string{"/data/name"}},
		{"version number", `[{"op":"replace","path":"/data/character_version","value":1}]`, []string{"/data/character_version"}},
		{"tags element", `[{"op":"replace","path":"/data/tags","value":["a",1,"b",null]}]`, []string{"/data/tags/1", "/data/tags/3"}},
		{"greetings object", `[{"op":"replace","path":"/data/alternate_greetings","value":{}}]`, []string{"/data/alternate_greetings"}},
		{"extensions array", `[{"op":"replace","path":"/data/extensions","value":[]}]`, []string{"/data/extensions"}},
		{"book null", `[{"op":"add","path":"/data/character_book","value":null}]`, []string{"/data/character_book"}},
		{"book fields", `[` + book + `,{"op":"add","path":"/data/character_book/name","value":1},{"op":"add","path":"/data/character_book/scan_depth","value":"4"},{"op":"add","path":"/data/character_book/recursive_scanning","value":0},{"op":"remove","path":"/data/character_book/extensions"}]`,
			[]string{"/data/character_book/name", "/data/character_book/scan_depth", "/data/character_book/recursive_scanning", "/data/character_book/extensions"}},
		{"entries missing", `[` + book + `,{"op":"remove","path":"/data/character_book/entries"}]`, []string{"/data/character_book/entries"}},
		{"entry not object", `[` + book + `,{"op":"add","path":"/data/character_book/entries/-","value":"x"}]`, []string{"/data/character_book/entries/1"}},
		{"entry required", `[` + book + `,{"op":"replace","path":"/data/character_book/entries/0","value":{}}]`,
			[]string{"/data/character_book/entries/0/keys", "/data/character_book/entries/0/content", "/data/character_book/entries/0/extensions", "/data/character_book/entries/0/enabled", "/data/character_book/entries/0/insertion_order"}},
		{"entry optional types", `[` + book + `,{"op":"add","path":"/data/character_book/entries/0/case_sensitive","value":"no"},{"op":"add","path":"/data/character_book/entries/0/priority","value":"1"},{"op":"add","path":"/data/character_book/entries/0/secondary_keys","value":[1]},{"op":"add","path":"/data/character_book/entries/0/position","value":"middle"},{"op":"add","path":"/data/character_book/entries/0/id","value":null}]`,
			[]string{"/data/character_book/entries/0/case_sensitive", "/data/character_book/entries/0/priority", "/data/character_book/entries/0/id", "/data/character_book/entries/0/secondary_keys/0", "/data/character_book/entries/0/position"}},
		{"entry position ok", `[` + book + `,{"op":"add","path":"/data/character_book/entries/0/position","value":"before_char"}]`, nil},
		{"unknown fields ok", `[{"op":"add","path":"/x","value":1},{"op":"add","path":"/data/extensions/y","value":[null]}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := edit(t, minimal, tt.patch).Validate()
			if tt.want == nil {
				testutil.Success(t, err)
				return
			}
			var ve *ValidationError
			testutil.ErrorAs(t, err, &ve)
			testutil.Equal(t, "violations", violations(err), tt.want)
			for _, v := range ve.Violations {
				if v.Message == "" {
					t.Fatalf("%s: empty message", v.Pointer)
				}
			}
		})
	}
}

func TestCard_Validate_testdata(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"minimal.json", "full.json", "lorebook-200.json", "cjk-emoji.json", "deep-extensions.json"} {
		testutil.Success(t, mustParse(t, string(readCard(t, name))).Validate())
	}
	err := mustParse(t, string(readCard(t, "invalid-content.json"))).Validate()
	want := []string{"/data/name", "/data/character_version", "/data/tags/1", "/data/character_book/scan_depth",
		"/data/character_book/entries/0/keys", "/data/character_book/entries/0/content", "/data/character_book/entries/0/extensions",
		"/data/character_book/entries/0/enabled", "/data/character_book/entries/0/insertion_order",
		"/data/character_book/entries/0/secondary_keys/0", "/data/character_book/entries/0/position"}
	// Order: required strings, name, arrays, book fields, entries.
	got := violations(err)
	testutil.Equal(t, "count", len(got), len(want))
	for _, w := range want {
		if !strings.Contains(strings.Join(got, " "), w) {
			t.Fatalf("missing violation %s in %v", w, got)
		}
	}
}

func TestRepair_testdata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		changes []string // pointers
	}{
		{"minimal.json", nil},
		{"broken-book-extensions.json", []string{"/data/character_book/extensions", "/data/character_book/entries/0/extensions"}},
		{"broken-missing-fields.json", []string{"/data/creator_notes", "/data/system_prompt", "/data/post_history_instructions", "/data/creator", "/data/character_version", "/data/alternate_greetings", "/data/tags", "/data/extensions"}},
		{"broken-null-fields.json", []string{"/data/creator", "/data/tags", "/data/extensions"}},
		{"broken-v3.json", []string{"/spec", "/spec_version"}},
		{"broken-entry-fields.json", []string{"/data/character_book/entries/0/extensions", "/data/character_book/entries/0/enabled",
			"/data/character_book/entries/1/keys", "/data/character_book/entries/1/extensions", "/data/character_book/entries/1/insertion_order"}},
		// Issue #18: a V1 card is one upgrade, as SillyTavern imports it.
		{"v1.json", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			in := readCard(t, tt.file)
			c, changes, err := Repair(in)
			testutil.Success(t, err)
			var got []string
			for _, ch := range changes {
				got = append(got, ch.Pointer)
			}
			testutil.Equal(t, "changes", got, tt.changes)
			testutil.Success(t, c.Validate())
			if tt.changes == nil {
				testutil.Equal(t, "unchanged bytes", c.Bytes(), in)
			}
			// Never touching content: every value of the input is still
			// there (V1 and V3 aside, where spec fields change).
			assertKept(t, in, c.Bytes())
		})
	}
	// The values filled in, not only where.
	c, _, err := Repair(readCard(t, "broken-entry-fields.json"))
	testutil.Success(t, err)
	var card struct {
		Data struct {
			Book struct {
				Entries []map[string]any `json:"entries"`
			} `json:"character_book"`
		} `json:"data"`
	}
	testutil.Success(t, json.Unmarshal(c.Bytes(), &card))
	e := card.Data.Book.Entries
	testutil.Equal(t, "entry 0", e[0], map[string]any{"keys": []any{"k"}, "content": "c", "insertion_order": 3.0, "extensions": map[string]any{}, "enabled": true})
	testutil.Equal(t, "entry 1 keeps enabled false", e[1], map[string]any{"content": "no keys", "enabled": false, "keys": []any{}, "extensions": map[string]any{}, "insertion_order": 0.0})
}

// assertKept checks that every leaf of the input other than spec and
// spec_version keeps its value in the output, under data for V1 fields.
func assertKept(t *testing.T, in, out []byte) {
	t.Helper()
	a := decodeTree(in)
	b := decodeTree(out)
	for i, k := range a.keys {
		if k == "spec" || k == "spec_version" {
			continue
		}
		got := b.get(k)
		if got == nil || string(got.append(nil)) != string(a.items[i].append(nil)) {
			if k != "data" || a.items[i].kind != '{' {
				t.Fatalf("top-level %q changed", k)
			}
		}
	}
	if ad := a.get("data"); ad != nil {
		bd := b.get("data")
		for i, k := range ad.keys {
			if v := ad.items[i]; v.kind != nodeNull && k != "character_book" && string(bd.get(k).append(nil)) != string(v.append(nil)) {
				t.Fatalf("data %q changed", k)
			}
		}
	}
}

func TestRepair_byteOrderMark(t *testing.T) {
	t.Parallel()
	in := append([]byte("\xef\xbb\xbf"), readCard(t, "minimal.json")...)
	_, err := Parse(in)
	var pe *ParseError
	testutil.ErrorAs(t, err, &pe)
	if !strings.Contains(pe.Msg, "byte order mark") {
		t.Fatalf("message %q", pe.Msg)
	}
	c, changes, err := Repair(in)
	testutil.Success(t, err)
	testutil.Equal(t, "changes", len(changes), 1)
	testutil.Equal(t, "bytes", c.Bytes(), in[3:])
}

func TestRepair_specMissing(t *testing.T) {
	t.Parallel()
	c, changes, err := Repair([]byte(`{"data":{"name":"X"}}`))
	testutil.Success(t, err)
	testutil.Equal(t, "first change", changes[0], Change{Pointer: "", Message: `added spec "chara_card_v2" (the card has data but no spec)`})
	testutil.Equal(t, "name", c.Name(), "X")
}

func TestRepair_leavesContentViolations(t *testing.T) {
	t.Parallel()
	in := readCard(t, "invalid-content.json")
	c, _, err := Repair(in)
	var ve *ValidationError
	testutil.ErrorAs(t, err, &ve)
	if !strings.Contains(strings.Join(violations(err), " "), "/data/name ") {
		t.Fatalf("blank name not reported: %v", violations(err))
	}
	testutil.Equal(t, "card returned", c != nil, true)
	_, _, err = Repair(readCard(t, "malformed-duplicate-key.json"))
	var pe *ParseError
	testutil.ErrorAs(t, err, &pe)
}

// TestRepair_sharedCards: every real card validates after repair.
func TestRepair_sharedCards(t *testing.T) {
	t.Parallel()
	dir := testutil.SharedDir(t, "cards")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 10 {
		t.Fatalf("expected the shared cards, found %d", len(files))
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		testutil.Success(t, err)
		c, changes, err := Repair(in)
		if err != nil {
			t.Fatalf("%s: %v (changes %v)", filepath.Base(f), err, changes)
		}
		testutil.Success(t, c.Validate())
		assertKept(t, in, c.Bytes())
		t.Logf("%s: %d changes %v", filepath.Base(f), len(changes), changes)
	}
}
