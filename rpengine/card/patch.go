package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/gamelink-go/gamelink/internal/errd"
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
// The input is canonical (ApplyPatch canonicalizes it; planPatch generates
// it), so it is walked with the splice helpers instead of encoding/json,
// which would also match member names case-insensitively ("pAth").
func decodePatch(canonical []byte) ([]patchOp, error) {
	if len(canonical) == 0 || canonical[0] != '[' {
		return nil, &PatchError{Index: -1, Err: fmt.Errorf("%w: a patch must be a JSON array", errPatchInvalid)}
	}
	elems := children(canonical, 0, nil)
	ops := make([]patchOp, len(elems))
	var kids []span
	for i, e := range elems {
		op := &ops[i]
		op.raw = canonical[e.s:e.e]
		if canonical[e.s] != '{' {
			return nil, &PatchError{Index: i, Err: fmt.Errorf("%w: an operation must be an object", errPatchInvalid)}
		}
		kids = children(canonical, e.s, kids[:0])
		if err := op.decode(canonical, kids); err != nil {
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

// decode reads the members op, path, from and value by their exact names.
func (op *patchOp) decode(doc []byte, kids []span) error {
	for _, k := range kids {
		v := doc[k.s:k.e]
		name := string(doc[k.ks+1 : k.s-2]) // member names needing escapes match none below
		if name == "value" {
			op.Value = v
			continue
		}
		var dst **string
		switch name {
		case "op":
			if v[0] != '"' {
				return fmt.Errorf("%w: op must be a string", errPatchInvalid)
			}
			op.Op = string(appendUnescaped(nil, v[1:len(v)-1]))
			continue
		case "path":
			dst = &op.Path
		case "from":
			dst = &op.From
		default:
			continue // RFC 6902 section 4: other members are ignored
		}
		if v[0] != '"' {
			return fmt.Errorf("%w: %s must be a string", errPatchInvalid, name)
		}
		str := string(appendUnescaped(nil, v[1:len(v)-1]))
		*dst = &str
	}
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
// defects: both inputs are canonicalized
// first; every pointer is checked strictly (no leading zeros, signs or
// negative indices, test targets must exist, no move into the moved
// value's own child) by a strict applier of
// our own, whose result evanphx must reproduce; copies are bounded by
// [MaxSize]; a panic inside evanphx becomes an error. Scalar documents,
// operations on the root and pointers with empty keys, which evanphx
// resolves wrongly, are applied by the strict applier alone.
func ApplyPatch(doc, patch []byte) ([]byte, error) {
	cdoc, err := AppendCanonical(nil, doc)
	if err != nil {
		errd.Wrap(&err, "card: apply patch: document") // "card: " said once
		return nil, err
	}
	cpatch, err := AppendCanonical(nil, patch) // rejects duplicate members in operations
	if err != nil {
		errd.Wrap(&err, "card: apply patch: patch")
		return nil, err
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

// verifyStrict reports whether ops applied to the canonical cdoc give
// want. The last operation's splice compares instead of copying.
func verifyStrict(cdoc []byte, ops []patchOp, want []byte) bool {
	sp := splicer{doc: cdoc, limit: MaxSize}
	for i := range ops {
		if op := ops[i].Op; i == len(ops)-1 && (op == "add" || op == "replace" || op == "remove") {
			sp.want = want // its one splice compares
		}
		if err := sp.apply(&ops[i]); err != nil {
			return false
		}
	}
	if sp.compared {
		return sp.same
	}
	return bytes.Equal(sp.doc, want)
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
// add, remove and replace only, and its values are canonical JSON, so for
// a target that is not hash-safe ([Card.CheckNumbers]) its numbers are the
// RFC 8785 forms (1.0 becomes 1; integers beyond 2^53 are rounded).
func Diff(base, target *Card) (json.RawMessage, error) {
	if base == nil || target == nil {
		return nil, errors.New("card: diff: nil card")
	}
	ops, ok := planPatch(base.canonical(), target, -1)
	if !ok {
		return nil, errors.New("card: diff: the generated patch did not reproduce the target; this is a bug")
	}
	return ops, nil
}

// planPatch returns a verified RFC 6902 patch from the canonical base to
// target, shorter than limit bytes (no bound if negative), or false. The
// patch is verified by applying it to base: the result must be target's
// canonical form, whose SHA-256 is target's digest. Comparing the bytes
// proves the same as hashing them and costs a fraction of it.
func planPatch(base []byte, target *Card, limit int) ([]byte, bool) {
	want := target.canonical()
	g := newDiffer(base, want, limit)
	g.value(0, 0)
	if g.over {
		return nil, false
	}
	g.out = append(g.out, ']')
	if limit >= 0 && len(g.out) >= limit {
		return nil, false
	}
	ops, err := decodePatch(g.out)
	if err != nil || !verifyStrict(base, ops, want) {
		return nil, false
	}
	return g.out, true
}
