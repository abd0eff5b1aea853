package card

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// evanphx/json-patch is the differential oracle of ApplyPatch (it is not
// used at run time). It has known defects, so it is asked only where
// none applies: canonical inputs (no duplicate keys, one number text),
// no test operation (it panics on arrays holding null and compares
// numbers as text), no empty name, nothing at the root, and only where
// ours succeeded (it accepts indexes such as 01 and -1, and a move into
// the moved value's own child).
func evanphxApply(t testing.TB, doc, patch []byte) ([]byte, bool) {
	cdoc, err := AppendCanonical(nil, doc)
	if err != nil || (cdoc[0] != '{' && cdoc[0] != '[') {
		return nil, false
	}
	cpatch, err := AppendCanonical(nil, patch)
	if err != nil {
		return nil, false
	}
	ops, err := decodePatch(cpatch)
	if err != nil {
		return nil, false
	}
	var kept []json.RawMessage
	for _, op := range ops {
		if slices.Contains(op.path, "") || slices.Contains(op.from, "") || len(op.path) == 0 || (op.hasFrom && len(op.from) == 0) {
			return nil, false
		}
		if op.Op == "test" {
			continue
		}
		b, _ := json.Marshal(map[string]any{"op": op.Op, "path": op.Path})
		if op.hasFrom {
			b, _ = json.Marshal(map[string]any{"op": op.Op, "path": op.Path, "from": op.From})
		}
		if op.Value != nil {
			b = append(append(b[:len(b)-1], `,"value":`...), op.Value...)
			b = append(b, '}')
		}
		kept = append(kept, b)
	}
	p, err := json.Marshal(kept)
	testutil.Success(t, err)
	decoded, err := jsonpatch.DecodePatch(p)
	if err != nil {
		t.Fatalf("evanphx cannot decode %s: %v", p, err)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = MaxSize
	out, err := decoded.ApplyWithOptions(cdoc, opts)
	if err != nil {
		t.Fatalf("evanphx refused %s + %s, which ours applied: %v", cdoc, p, err)
	}
	out, err = AppendCanonical(nil, out)
	testutil.Success(t, err)
	return out, true
}

// TestApplyPatch_oracle applies random patches to random documents and
// compares the result with evanphx/json-patch's.
func TestApplyPatch_oracle(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	g := &docGen{r: r}
	compared := 0
	for range scaled(1500) {
		g.b = g.b[:0]
		g.object(3)
		doc := bytes.Clone(g.b)
		if _, err := AppendCanonical(nil, doc); err != nil {
			continue
		}
		patch := randomPatch(t, r, doc, 1+r.IntN(6))
		got, err := ApplyPatch(doc, patch)
		if err != nil {
			continue
		}
		if want, ok := evanphxApply(t, doc, patch); ok {
			compared++
			if !bytes.Equal(got, want) {
				t.Fatalf("%s + %s:\nours    %s\nevanphx %s", doc, patch, got, want)
			}
		}
	}
	if compared < scaled(1500)/4 {
		t.Fatalf("only %d patches compared", compared)
	}
}

// randomPatch makes n operations on doc, each on what the ones before
// it left, choosing paths that exist (and some that do not).
func randomPatch(t testing.TB, r *rand.Rand, doc []byte, n int) []byte {
	var ops []string
	cur := doc
	for range n {
		var v any
		testutil.Success(t, json.Unmarshal(cur, &v))
		path, parent := randomPath(r, v)
		val := []string{`1`, `"x"`, `null`, `[1,{"a":2}]`, `{"b":[]}`, `1.0`}[r.IntN(6)]
		var op string
		switch k := r.IntN(7); {
		case k == 0 && parent != nil:
			op = fmt.Sprintf(`{"op":"remove","path":%q}`, path)
		case k == 1:
			op = fmt.Sprintf(`{"op":"replace","path":%q,"value":%s}`, path, val)
		case k == 2:
			to, _ := randomPath(r, v)
			op = fmt.Sprintf(`{"op":"copy","from":%q,"path":%q}`, path, childPath(r, to, v))
		case k == 3:
			to, _ := randomPath(r, v)
			op = fmt.Sprintf(`{"op":"move","from":%q,"path":%q}`, path, childPath(r, to, v))
		case k == 4:
			cv, _ := json.Marshal(valueAt(v, path))
			op = fmt.Sprintf(`{"op":"test","path":%q,"value":%s}`, path, cv)
		default:
			op = fmt.Sprintf(`{"op":"add","path":%q,"value":%s}`, childPath(r, path, v), val)
		}
		next, err := ApplyPatch(cur, []byte("["+op+"]"))
		if err != nil && r.IntN(4) != 0 {
			continue // mostly operations that apply
		}
		ops = append(ops, op)
		if err == nil {
			cur = next
		}
	}
	return []byte("[" + joinStrings(ops) + "]")
}

func joinStrings(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x)
	}
	return b.String()
}

// randomPath returns the pointer of a random value of v and its parent.
func randomPath(r *rand.Rand, v any) (string, any) {
	path, parent := "", any(nil)
	for r.IntN(3) != 0 {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				return path, parent
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			k := keys[r.IntN(len(keys))]
			path, parent, v = path+"/"+escapeToken(k), x, x[k]
		case []any:
			if len(x) == 0 {
				return path, parent
			}
			i := r.IntN(len(x))
			path, parent, v = path+"/"+strconv.Itoa(i), x, x[i]
		default:
			return path, parent
		}
	}
	return path, parent
}

// childPath returns a pointer for a new child of the value at path: a new
// member, an index (or "-") of an array, or path itself.
func childPath(r *rand.Rand, path string, v any) string {
	switch x := valueAt(v, path).(type) {
	case map[string]any:
		return path + "/" + escapeToken(genKeys[r.IntN(len(genKeys))])
	case []any:
		if r.IntN(3) == 0 {
			return path + "/-"
		}
		return path + "/" + strconv.Itoa(r.IntN(len(x)+2))
	}
	return path
}

func valueAt(v any, path string) any {
	toks, _ := splitPointer(path)
	for _, tok := range toks {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		}
	}
	return v
}

// splitPointer splits an RFC 6901 pointer into unescaped tokens.
func splitPointer(p string) ([]string, bool) { return appendTokens(nil, p) }
