package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// patchOp is one decoded RFC 6902 operation.
type patchOp struct {
	Op    string
	Path  *string
	From  *string
	Value json.RawMessage // nil when absent

	raw        []byte   // the operation as given (canonical)
	path, from []string // split pointers
	emptyToken bool     // a pointer has an empty reference token
}

// decodePatch decodes and checks a canonical patch: an array of objects
// with a known op, valid RFC 6901 pointers, and the members each op needs.
func decodePatch(canonical []byte) ([]patchOp, error) {
	if len(canonical) == 0 || canonical[0] != '[' {
		return nil, &PatchError{Index: -1, Err: fmt.Errorf("%w: a patch must be a JSON array", errPatchInvalid)}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(canonical, &raw); err != nil {
		return nil, &PatchError{Index: -1, Err: err}
	}
	ops := make([]patchOp, len(raw))
	for i, r := range raw {
		op := &ops[i]
		op.raw = r
		if err := op.decode(r); err != nil {
			return nil, &PatchError{Index: i, Err: err}
		}
		if err := op.check(); err != nil {
			pe := &PatchError{Index: i, Op: op.Op, Err: err}
			if op.Path != nil {
				pe.Path = *op.Path
			}
			return nil, pe
		}
	}
	return ops, nil
}

// decode reads the members by their exact names: encoding/json would also
// match "pAth" to Path, and RFC 6902 member names are case-sensitive.
func (op *patchOp) decode(r []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil || r[0] != '{' {
		return fmt.Errorf("%w: an operation must be an object", errPatchInvalid)
	}
	for name, dst := range map[string]**string{"path": &op.Path, "from": &op.From} {
		if v, ok := m[name]; ok {
			*dst = new(string)
			if err := json.Unmarshal(v, *dst); err != nil || v[0] != '"' {
				return fmt.Errorf("%w: %s must be a string", errPatchInvalid, name)
			}
		}
	}
	if v, ok := m["op"]; ok {
		if err := json.Unmarshal(v, &op.Op); err != nil || v[0] != '"' {
			return fmt.Errorf("%w: op must be a string", errPatchInvalid)
		}
	}
	op.Value = m["value"]
	return nil
}

func (op *patchOp) check() error {
	var needFrom, needValue bool
	switch op.Op {
	case "add", "replace", "test":
		needValue = true
	case "remove":
	case "move", "copy":
		needFrom = true
	default:
		return fmt.Errorf("%w: unknown op %q", errPatchInvalid, op.Op)
	}
	var ok bool
	if op.Path == nil {
		return fmt.Errorf("%w: missing path", errPatchInvalid)
	}
	if op.path, ok = splitPointer(*op.Path); !ok {
		return fmt.Errorf("%w: path %q is not a JSON Pointer", errPatchInvalid, *op.Path)
	}
	if needValue && op.Value == nil {
		return fmt.Errorf("%w: missing value", errPatchInvalid)
	}
	if needFrom {
		if op.From == nil {
			return fmt.Errorf("%w: missing from", errPatchInvalid)
		}
		if op.from, ok = splitPointer(*op.From); !ok {
			return fmt.Errorf("%w: from %q is not a JSON Pointer", errPatchInvalid, *op.From)
		}
	}
	for _, t := range append(op.path[:len(op.path):len(op.path)], op.from...) {
		if t == "" {
			op.emptyToken = true
		}
	}
	return nil
}

// ApplyPatch applies the RFC 6902 patch to the JSON document doc and
// returns the result as RFC 8785 canonical JSON. Neither input is
// modified. Errors are a *[ParseError] for malformed JSON or a
// *[PatchError] naming the operation at fault.
//
// It wraps github.com/evanphx/json-patch/v5 and guards against its known
// defects (shared notes, section 2.3): both inputs are canonicalized first; every pointer is checked
// strictly (no leading zeros, signs or negative indices, test targets must
// exist, no move into the moved value's own child) by a strict applier of
// our own, whose result evanphx must reproduce; copies are bounded by
// [MaxSize]; a panic inside evanphx becomes an error. Scalar documents,
// operations on the root and pointers with empty keys, which evanphx
// resolves wrongly, are applied by the strict applier alone.
func ApplyPatch(doc, patch []byte) ([]byte, error) {
	cdoc, err := AppendCanonical(nil, doc)
	if err != nil {
		return nil, fmt.Errorf("card: apply patch: document: %w", err)
	}
	cpatch, err := AppendCanonical(nil, patch) // rejects duplicate members in operations
	if err != nil {
		return nil, fmt.Errorf("card: apply patch: patch: %w", err)
	}
	ops, err := decodePatch(cpatch)
	if err != nil {
		return nil, err
	}
	want, err := applyStrict(cdoc, ops)
	if err != nil {
		return nil, err
	}
	if !evanphxSafe(cdoc, ops) {
		return want, nil
	}
	got, err := applyEvanphx(cdoc, withoutTests(ops))
	if err != nil {
		return nil, &PatchError{Index: -1, Err: fmt.Errorf("evanphx/json-patch refused a patch the strict applier accepted: %w", err)}
	}
	if got, err = AppendCanonical(got[:0:0], got); err != nil || !bytes.Equal(got, want) {
		return nil, &PatchError{Index: -1, Err: errors.New("evanphx/json-patch and the strict applier disagree on the result")}
	}
	return want, nil
}

// withoutTests re-encodes the patch without its test operations: the
// strict applier has checked them in sequence, they change nothing, and
// evanphx's test is the operation with known defects (it panics on arrays
// holding null and compares numbers as text).
func withoutTests(ops []patchOp) []byte {
	b := []byte{'['}
	for i := range ops {
		if ops[i].Op == "test" {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, ops[i].raw...)
	}
	return append(b, ']')
}

func applyStrict(cdoc []byte, ops []patchOp) ([]byte, error) {
	sp := splicer{doc: cdoc, limit: MaxSize}
	for i := range ops {
		if err := sp.apply(&ops[i]); err != nil {
			return nil, &PatchError{Index: i, Op: ops[i].Op, Path: *ops[i].Path, Err: err}
		}
	}
	return sp.doc, nil
}

// evanphxSafe reports whether evanphx can apply ops to doc correctly.
func evanphxSafe(doc []byte, ops []patchOp) bool {
	if doc[0] != '{' && doc[0] != '[' {
		return false
	}
	for i := range ops {
		op := &ops[i]
		if op.emptyToken {
			return false
		}
		if op.Op != "test" && (len(op.path) == 0 || (op.From != nil && len(op.from) == 0)) {
			return false // the root: evanphx mishandles scalars and copy/move of the whole document
		}
	}
	return true
}

func applyEvanphx(doc, patch []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in evanphx/json-patch: %v", r)
		}
	}()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = MaxSize
	opts.EnsurePathExistsOnAdd = false
	return p.ApplyWithOptions(doc, opts)
}

// Diff returns an RFC 6902 patch that turns base into target, verified:
// applied to base it yields a document with target's hash. The patch uses
// add, remove and replace only, and its values are canonical JSON.
func Diff(base, target *Card) (json.RawMessage, error) {
	cb, err := AppendCanonical(nil, base.raw)
	if err != nil {
		return nil, err
	}
	ops, ok := planPatch(cb, target, -1)
	if !ok {
		return nil, errors.New("card: diff: the generated patch did not reproduce the target; this is a bug")
	}
	return ops, nil
}

// planPatch returns a verified RFC 6902 patch from the canonical base to
// target, shorter than limit bytes (no bound if negative), or false.
func planPatch(base []byte, target *Card, limit int) ([]byte, bool) {
	ct := getCanon(target.raw, nil)
	ct.out = ct.buf[:0]
	err := ct.run()
	defer func() { ct.buf = ct.out[:0]; putCanon(ct) }()
	if err != nil {
		return nil, false
	}
	g := differ{a: base, b: ct.out, limit: limit, out: []byte{'['}}
	if !g.value(span{0, 0, len(base)}, span{0, 0, len(ct.out)}) {
		return nil, false
	}
	g.out = append(g.out, ']')
	if limit >= 0 && len(g.out) >= limit {
		return nil, false
	}
	ops, err := decodePatch(g.out)
	if err != nil {
		return nil, false
	}
	res, err := applyStrict(base, ops)
	if err != nil || Digest(sha256.Sum256(res)) != target.digest {
		return nil, false
	}
	return g.out, true
}

// differ writes add/remove/replace operations turning a into b; both are
// canonical, so equal values are equal bytes and members are sorted.
type differ struct {
	a, b  []byte
	path  []byte // current pointer, tokens escaped
	out   []byte
	limit int
}

func (g *differ) op(op string, value []byte) bool {
	if len(g.out) > 1 {
		g.out = append(g.out, ',')
	}
	g.out = append(g.out, `{"op":"`...)
	g.out = append(g.out, op...)
	g.out = append(g.out, `","path":`...)
	g.out = appendCanonicalString(g.out, string(g.path))
	if value != nil {
		g.out = append(g.out, `,"value":`...)
		g.out = append(g.out, value...)
	}
	g.out = append(g.out, '}')
	return g.limit < 0 || len(g.out) < g.limit
}

func (g *differ) push(tok string) int {
	n := len(g.path)
	g.path = append(g.path, '/')
	g.path = append(g.path, escapeToken(tok)...)
	return n
}

func (g *differ) value(x, y span) bool {
	a, b := g.a[x.s:x.e], g.b[y.s:y.e]
	switch {
	case bytes.Equal(a, b):
		return true
	case a[0] == '{' && b[0] == '{':
		return g.object(x, y)
	case a[0] == '[' && b[0] == '[':
		return g.array(x, y)
	}
	return g.op("replace", b)
}

func (g *differ) object(x, y span) bool {
	ka, kb := children(g.a, x.s, nil), children(g.b, y.s, nil)
	i, j := 0, 0
	for i < len(ka) || j < len(kb) {
		cmp := 0
		switch {
		case i == len(ka):
			cmp = 1
		case j == len(kb):
			cmp = -1
		default:
			cmp = compareUTF16(keyOf(g.a, ka[i]), keyOf(g.b, kb[j]))
		}
		ok := true
		switch {
		case cmp < 0:
			n := g.push(string(keyOf(g.a, ka[i])))
			ok = g.op("remove", nil)
			g.path = g.path[:n]
			i++
		case cmp > 0:
			n := g.push(string(keyOf(g.b, kb[j])))
			ok = g.op("add", g.b[kb[j].s:kb[j].e])
			g.path = g.path[:n]
			j++
		default:
			n := g.push(string(keyOf(g.a, ka[i])))
			ok = g.value(ka[i], kb[j])
			g.path = g.path[:n]
			i, j = i+1, j+1
		}
		if !ok {
			return false
		}
	}
	return true
}

// array keeps the common prefix and suffix, diffs the middle pairwise, and
// removes or adds what is left over.
func (g *differ) array(x, y span) bool {
	ea, eb := children(g.a, x.s, nil), children(g.b, y.s, nil)
	eq := func(i, j int) bool { return bytes.Equal(g.a[ea[i].s:ea[i].e], g.b[eb[j].s:eb[j].e]) }
	p := 0
	for p < len(ea) && p < len(eb) && eq(p, p) {
		p++
	}
	s := 0
	for s < len(ea)-p && s < len(eb)-p && eq(len(ea)-1-s, len(eb)-1-s) {
		s++
	}
	na, nb := len(ea)-p-s, len(eb)-p-s
	m := min(na, nb)
	at := func(i int, f func() bool) bool {
		n := g.push(strconv.Itoa(i))
		ok := f()
		g.path = g.path[:n]
		return ok
	}
	for k := 0; k < m; k++ {
		if !at(p+k, func() bool { return g.value(ea[p+k], eb[p+k]) }) {
			return false
		}
	}
	for k := na - 1; k >= m; k-- {
		if !at(p+k, func() bool { return g.op("remove", nil) }) {
			return false
		}
	}
	for k := m; k < nb; k++ {
		e := eb[p+k]
		if !at(p+k, func() bool { return g.op("add", g.b[e.s:e.e]) }) {
			return false
		}
	}
	return true
}
