package card

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestApplyPatch_guards pins each guard the wrapper puts around evanphx
// (ApplyPatch's doc lists them): each case names the operation at fault and
// the reason, not just "some error".
func TestApplyPatch_guards(t *testing.T) {
	t.Parallel()
	big := `{"s":"` + strings.Repeat("x", MaxSize/4) + `"}`
	tests := []struct {
		name, doc, patch string
		want             string // canonical result; "" when an error is wanted
		index            int    // PatchError.Index wanted
		err              error  // wrapped by the PatchError
	}{
		{name: "move into own child in an array", doc: `{"a":[[1,2],[3]]}`, patch: `[{"op":"move","from":"/a/0","path":"/a/0/0"}]`, index: 0, err: errPatchInvalid},
		{name: "move into own child in an object", doc: `{"a":{"b":1}}`, patch: `[{"op":"test","path":"/a/b","value":1},{"op":"move","from":"/a","path":"/a/c"}]`, index: 1, err: errPatchInvalid},
		{name: "move onto itself", doc: `{"a":{"b":1}}`, patch: `[{"op":"move","from":"/a","path":"/a"}]`, want: `{"a":{"b":1}}`},
		{name: "copies past the size limit", doc: big, patch: `[{"op":"copy","from":"/s","path":"/t"},{"op":"copy","from":"/s","path":"/u"},{"op":"copy","from":"/s","path":"/v"},{"op":"copy","from":"/s","path":"/w"}]`, index: 2, err: errCopyTooLarge},
		{name: "leading zero index", doc: `{"a":[1,2]}`, patch: `[{"op":"remove","path":"/a/01"}]`, index: 0},
		{name: "negative index", doc: `{"a":[1,2]}`, patch: `[{"op":"remove","path":"/a/-1"}]`, index: 0},
		{name: "test of a missing member with null", doc: `{"a":1}`, patch: `[{"op":"test","path":"/b","value":null}]`, index: 0, err: errPathMissing},
		{name: "test of arrays holding null (evanphx panics)", doc: `{"a":[null,1]}`, patch: `[{"op":"test","path":"/a","value":[null,1]},{"op":"add","path":"/b","value":true}]`, want: `{"a":[null,1],"b":true}`},
		{name: "test compares numbers numerically", doc: `{"a":100}`, patch: `[{"op":"test","path":"/a","value":1e2}]`, want: `{"a":100}`},
		{name: "the empty key", doc: `{"":{"m":1},"m":2}`, patch: `[{"op":"remove","path":"//m"}]`, want: `{"":{},"m":2}`},
		{name: "test without value", doc: `{"a":null}`, patch: `[{"op":"test","path":"/a"}]`, index: 0, err: errPatchInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ApplyPatch([]byte(tt.doc), []byte(tt.patch))
			if tt.want != "" {
				testutil.Success(t, err)
				testutil.Equal(t, "result", string(got), tt.want)
				return
			}
			var pe *PatchError
			testutil.ErrorAs(t, err, &pe)
			testutil.Equal(t, "operation at fault", pe.Index, tt.index)
			if tt.err != nil {
				testutil.ErrorIs(t, err, tt.err)
			}
		})
	}
}

// Issue #17: an error says once where it came from ("card: apply patch:
// patch: card: parse: ..." read the prefix twice), and its cause stays
// reachable.
func TestApplyPatch_errorPrefixOnce(t *testing.T) {
	t.Parallel()
	_, err := ApplyPatch([]byte(`{}`), []byte(`[{"op":"add","op":"remove"}]`))
	var pe *ParseError
	testutil.ErrorAs(t, err, &pe)
	testutil.Equal(t, "text", strings.Count(err.Error(), "card: "), 1)
	if !strings.HasPrefix(err.Error(), "card: apply patch: patch: parse: ") {
		t.Errorf("error %q", err)
	}
	_, err = ApplyPatch([]byte(`{"a":`), []byte(`[]`))
	testutil.ErrorAs(t, err, &pe)
	testutil.Equal(t, "document", strings.Count(err.Error(), "card: "), 1)
}

// TestVerify checks the verification of generated patches: it must
// accept the target and refuse any other document, whatever byte differs
// or whatever its length. Issue #24.
func TestVerify(t *testing.T) {
	t.Parallel()
	base := canonicalOf(t, `{"a":[1,2,3],"b":{"c":"x","d":true},"e":"tail"}`)
	for _, c := range []struct{ patch, want string }{
		{`[{"op":"replace","path":"/b/c","value":"yy"}]`, `{"a":[1,2,3],"b":{"c":"yy","d":true},"e":"tail"}`},
		{`[{"op":"add","path":"/b/cc","value":1}]`, `{"a":[1,2,3],"b":{"c":"x","cc":1,"d":true},"e":"tail"}`},
		{`[{"op":"remove","path":"/a/1"}]`, `{"a":[1,3],"b":{"c":"x","d":true},"e":"tail"}`},
		{`[{"op":"remove","path":"/a/0"},{"op":"add","path":"/a/-","value":4}]`, `{"a":[2,3,4],"b":{"c":"x","d":true},"e":"tail"}`},
		{`[{"op":"test","path":"/e","value":"tail"}]`, `{"a":[1,2,3],"b":{"c":"x","d":true},"e":"tail"}`},
	} {
		patch, want := []byte(c.patch), []byte(c.want)
		testutil.Equal(t, c.patch+" verified", verify(base, nil, patch, want), true)
		for i := range want {
			bad := bytes.Clone(want)
			bad[i] ^= 1
			if verify(base, nil, patch, bad) {
				t.Fatalf("%s: accepted %s", c.patch, bad)
			}
		}
		testutil.Equal(t, c.patch+" longer", verify(base, nil, patch, append(bytes.Clone(want), ' ')), false)
		testutil.Equal(t, c.patch+" shorter", verify(base, nil, patch, want[:len(want)-1]), false)
	}
}

func canonicalOf(t *testing.T, doc string) []byte {
	t.Helper()
	c, err := AppendCanonical(nil, []byte(doc))
	testutil.Success(t, err)
	return c
}
