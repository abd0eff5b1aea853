package card

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
)

// patchOp is one decoded RFC 6902 operation.
type patchOp struct {
	Op               string
	Path, From       string
	hasPath, hasFrom bool
	Value            []byte   // canonical; nil when absent
	path, from       []string // split pointers
}

// decodePatch decodes and checks a canonical patch: an array of objects
// with a known op, valid RFC 6901 pointers, and the members each op needs,
// matched by their exact names (encoding/json would also take "pAth").
func decodePatch(patch []byte) ([]patchOp, error) {
	if patch[0] != '[' {
		return nil, &PatchError{Index: -1, Err: fmt.Errorf("%w: a patch must be a JSON array", errPatchInvalid)}
	}
	ops := make([]patchOp, 0, min(bytes.Count(patch, []byte{'{'}), len(patch)/24)) // each at least {"op":"","path":""}
	var err error
	toks := make([]string, 0, min(bytes.Count(patch, []byte{'/'}), len(patch)/4)) // each token after a '/'
	items(patch, 0, func(it item) int {
		op := patchOp{}
		i := len(ops)
		if patch[it.vs] != '{' {
			err = &PatchError{Index: i, Err: fmt.Errorf("%w: an operation must be an object", errPatchInvalid)}
			return -1
		}
		end := items(patch, it.vs, func(m item) int {
			ve := skipValue(patch, m.vs)
			if err = op.member(patch, m, ve); err != nil {
				return -1
			}
			return ve
		})
		if err == nil {
			err = op.check(&toks)
		}
		if err != nil {
			err = &PatchError{Index: i, Op: op.Op, Path: op.Path, Err: err}
			return -1
		}
		ops = append(ops, op)
		return end
	})
	return ops, err
}

// member reads the member m of an operation: op, path, from and value
// by their exact names; others are ignored (RFC 6902 section 4).
func (op *patchOp) member(patch []byte, m item, ve int) error {
	name, v := patch[m.ks+1:m.ke-1], patch[m.vs:ve]
	switch string(name) { // names that need escapes match none of these
	case "value":
		op.Value = v
		return nil
	case "op", "path", "from":
	default:
		return nil
	}
	if v[0] != '"' {
		return fmt.Errorf("%w: %s must be a string", errPatchInvalid, name)
	}
	switch string(name) {
	case "op":
		switch s := v[1 : len(v)-1]; string(s) { // the known ops without an allocation
		case "add", "remove", "replace", "move", "copy", "test":
			op.Op = knownOps[string(s)]
		default:
			op.Op = text(patch, m.vs, ve)
		}
	case "path":
		op.Path, op.hasPath = text(patch, m.vs, ve), true
	default:
		op.From, op.hasFrom = text(patch, m.vs, ve), true
	}
	return nil
}

var knownOps = map[string]string{"add": "add", "remove": "remove", "replace": "replace", "move": "move", "copy": "copy", "test": "test"}

// check checks op and splits its pointers, appending their tokens to
// toks (shared by the operations of a patch: one array, not one each).
func (op *patchOp) check(toks *[]string) error {
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
	if !op.hasPath {
		return fmt.Errorf("%w: missing path", errPatchInvalid)
	}
	n := len(*toks)
	if *toks, ok = appendTokens(*toks, op.Path); !ok {
		return fmt.Errorf("%w: path %q is not a JSON Pointer", errPatchInvalid, op.Path)
	}
	op.path = (*toks)[n:len(*toks):len(*toks)]
	if needValue && op.Value == nil {
		return fmt.Errorf("%w: missing value", errPatchInvalid)
	}
	if needFrom {
		if !op.hasFrom {
			return fmt.Errorf("%w: missing from", errPatchInvalid)
		}
		n = len(*toks)
		if *toks, ok = appendTokens(*toks, op.From); !ok {
			return fmt.Errorf("%w: from %q is not a JSON Pointer", errPatchInvalid, op.From)
		}
		op.from = (*toks)[n:len(*toks):len(*toks)]
	}
	return nil
}

// ApplyPatch applies the RFC 6902 patch to the JSON document doc and
// returns the result as RFC 8785 canonical JSON. Neither input is
// modified. A document or patch over [MaxSize] is refused before it is
// read, with an error matching [ErrTooLarge]; other errors are a
// *[ParseError] for malformed JSON or a *[PatchError] naming the
// operation at fault.
//
// It follows RFC 6902 and RFC 6901 strictly: array indexes have no
// leading zeros, signs or negative values, a test compares values
// numerically and needs its target to exist, a value is never moved into
// its own child, the empty name "" is a name like any other, and copies
// cannot grow the document past MaxSize. Its time is linear in the sizes
// of doc and patch, times the logarithm of the number of operations.
func ApplyPatch(doc, patch []byte) ([]byte, error) {
	docBuf, patchBuf := getBuf(), getBuf() // scratch: the result is a copy
	defer putBuf(docBuf)
	defer putBuf(patchBuf)
	cdoc, err := canonicalScratch(docBuf, doc, "document")
	if err != nil {
		return nil, err
	}
	cpatch, err := canonicalScratch(patchBuf, patch, "patch") // refuses duplicate members in operations
	if err != nil {
		return nil, err
	}
	ops, err := decodePatch(cpatch)
	if err != nil {
		return nil, err
	}
	var big index
	if len(cdoc) > 1<<16 {
		big = indexOf(cdoc)
	}
	return applyOps(nil, cdoc, big, ops)
}

// canonicalScratch canonicalizes data, an input of ApplyPatch, into buf.
func canonicalScratch(buf *[]byte, data []byte, what string) (_ []byte, err error) {
	defer errd.Wrap(&err, "card: apply patch: "+what) // "card: " said once
	if err := checkSize(data, what); err != nil {
		return nil, err
	}
	*buf, err = jcs.Append((*buf)[:0], data, nil)
	if err != nil {
		return nil, parseError(err)
	}
	return *buf, nil
}

// applyOps appends to dst the result of ops applied to the canonical
// document cdoc, whose index is big (or nil).
func applyOps(dst, cdoc []byte, big index, ops []patchOp) ([]byte, error) {
	p := newPatcher(cdoc, big, MaxSize)
	for i := range ops {
		if err := p.apply(&ops[i]); err != nil {
			return nil, &PatchError{Index: i, Op: ops[i].Op, Path: ops[i].Path, Err: err}
		}
	}
	return p.write(slices.Grow(dst, p.root.size()), p.root), nil
}

// verify reports whether the canonical patch turns the canonical base,
// whose index is big (or nil), into want: a generated patch is always
// checked before it is used.
func verify(base []byte, big index, patch, want []byte) bool {
	ops, err := decodePatch(patch)
	if err != nil {
		return false
	}
	buf := getBuf()
	defer putBuf(buf)
	got, err := applyOps((*buf)[:0], base, big, ops)
	*buf = got
	return err == nil && bytes.Equal(got, want)
}

// bufs holds scratch buffers, of at most twice MaxSize.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 2*MaxSize {
		bufs.Put(b)
	}
}
