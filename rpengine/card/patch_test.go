package card

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

type patchRecord struct {
	Comment  string          `json:"comment"`
	Doc      json.RawMessage `json:"doc"`
	Patch    json.RawMessage `json:"patch"`
	Expected json.RawMessage `json:"expected"`
	Error    *string         `json:"error"`
	Disabled bool            `json:"disabled"`
}

func loadPatchSuite(t testing.TB, name string) []patchRecord {
	data, err := os.ReadFile(filepath.Join(conformanceDir, "jsonpatch", name))
	testutil.Success(t, err)
	var recs []patchRecord
	testutil.Success(t, json.Unmarshal(data, &recs)) // lenient: two disabled records hold duplicate keys
	return recs
}

func TestApplyPatch_conformance(t *testing.T) {
	t.Parallel()
	enabled := 0
	for _, file := range []string{"tests.json", "spec_tests.json"} {
		for i, r := range loadPatchSuite(t, file) {
			if r.Disabled {
				continue
			}
			enabled++
			t.Run(file+"#"+strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				got, err := ApplyPatch(r.Doc, r.Patch)
				if r.Error != nil {
					if err == nil {
						t.Fatalf("%s: applied to %s, want error %q", r.Comment, got, *r.Error)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", r.Comment, err)
				}
				if r.Expected == nil {
					return
				}
				want, err := AppendCanonical(nil, r.Expected)
				testutil.Success(t, err)
				testutil.Equal(t, r.Comment, string(got), string(want))
			})
		}
	}
	testutil.Equal(t, "enabled records", enabled, 92+16)
}
