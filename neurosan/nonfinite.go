package neurosan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonstr"
)

// The server is Python, and Python's json.dumps writes a float that is not
// finite as NaN, Infinity or -Infinity, which encoding/json rejects. Such
// values reach sly_data and structure from numpy or pandas values, or from
// model output the server parses. The client reads them as Python's
// json.loads does, without losing a byte:
//
//   - A scanner rewrites each such token outside strings into a number
//     token of the same length that Python never writes (NaN → 0E0,
//     Infinity → 1E+00000, -Infinity → -1E+00000: Python writes exponents
//     with a lowercase e), and lowercases any other E outside strings
//     (same value), so that a marker can only come from a rewrite.
//     encoding/json then reads the text, and byte offsets stay true. (So a
//     number that another writer spelled with E is kept with e: the one
//     byte the client may change, and never one the server writes.)
//   - Raw values (json.RawMessage fields: structure, chat_context,
//     sly_data values, unknown fields) get their original tokens back, so
//     they are sent back to the server unchanged, as the Python client
//     would send them.
//   - [Unmarshal] decodes such raw values into Go values, giving NaN,
//     Infinity and -Infinity as math.NaN(), math.Inf(1) and math.Inf(-1).

// nfScanner rewrites non-finite tokens: a state machine over the bytes
// that matter (quotes, backslashes, and E, N and I outside strings), which
// copies the runs between them as they are.
type nfScanner struct {
	inString, escaped bool
	held              [nfReserve]byte // a prefix of NaN or Infinity, held back
	nheld             int
	found             int // tokens rewritten so far
}

var (
	markerNaN = []byte("0E0")
	markerInf = []byte("1E+00000")
)

// scan appends the rewrite of src to dst (nothing if !out, to count
// tokens only). Bytes of an unfinished NaN or Infinity at the end are held
// back until the next call or flush. dst may share src's array if it ends
// at least nfReserve bytes before src begins.
func (s *nfScanner) scan(dst, src []byte, out bool) []byte {
	var scratch [2 * nfReserve]byte
	for len(src) > 0 {
		if s.nheld == 0 && !s.escaped {
			i := s.plain(src) // copied as runs: this is the hot path
			if out {
				dst = append(dst, src[:i]...)
			}
			if src = src[i:]; len(src) == 0 {
				break
			}
		}
		if out {
			dst = s.byte(dst, src[0])
		} else {
			s.byte(scratch[:0], src[0])
		}
		src = src[1:]
	}
	return dst
}

// plain returns how many bytes at the start of src pass unchanged: up to
// the next quote or backslash in a string, the next quote, E, N or I
// outside one.
func (s *nfScanner) plain(src []byte) int {
	if s.inString {
		i := bytes.IndexByte(src, '"')
		if i < 0 {
			i = len(src)
		}
		if j := bytes.IndexByte(src[:i], '\\'); j >= 0 {
			i = j
		}
		return i
	}
	for i, c := range src { // short runs between strings: a table beats IndexAny
		if nfOutside[c] {
			return i
		}
	}
	return len(src)
}

// nfOutside marks the bytes that need attention outside a string.
var nfOutside = [256]bool{'"': true, 'E': true, 'N': true, 'I': true}

func (s *nfScanner) byte(dst []byte, c byte) []byte {
	if s.nheld > 0 {
		word := "Infinity"
		if s.held[0] == 'N' {
			word = "NaN"
		}
		if c == word[s.nheld] {
			s.held[s.nheld] = c
			s.nheld++
			if s.nheld == len(word) {
				s.nheld = 0
				s.found++
				if word == "NaN" {
					return append(dst, markerNaN...)
				}
				return append(dst, markerInf...)
			}
			return dst
		}
		dst = s.flush(dst) // not a token: the JSON decoder reports it
	}
	switch {
	case s.inString:
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
		}
	case c == '"':
		s.inString = true
	case c == 'E':
		c = 'e'
	case c == 'N' || c == 'I':
		s.held[0], s.nheld = c, 1
		return dst
	}
	return append(dst, c)
}

// flush appends the bytes held back, unchanged.
func (s *nfScanner) flush(dst []byte) []byte {
	dst = append(dst, s.held[:s.nheld]...)
	s.nheld = 0
	return dst
}

// rewriteNonFinite returns b rewritten and how many tokens it rewrote; b
// itself, unchanged, when there were none.
func rewriteNonFinite(b []byte) ([]byte, int) {
	if bytes.IndexAny(b, "NI") < 0 {
		return b, 0
	}
	var s nfScanner
	if s.scan(nil, b, false); s.found == 0 {
		return b, 0 // the usual case, without a copy
	}
	s = nfScanner{}
	out := s.flush(s.scan(make([]byte, 0, len(b)), b, true))
	return out, s.found
}

// restoreNonFinite puts the original tokens back into text rewritten by
// nfScanner, in place: the only E outside strings are the markers'.
func restoreNonFinite(b []byte) {
	var strs jsonstr.Tracker
	for i, c := range b {
		switch {
		case !strs.Outside(c):
		case c == 'E' && i > 0 && i+1 < len(b):
			if b[i+1] == '0' {
				copy(b[i-1:], "NaN")
			} else if i+len(markerInf)-1 <= len(b) {
				copy(b[i-1:], "Infinity")
			}
		}
	}
}

// validJSON reports whether b is one JSON value as Python reads it (NaN,
// Infinity and -Infinity allowed).
func validJSON(b []byte) bool {
	if json.Valid(b) {
		return true
	}
	rw, n := rewriteNonFinite(b)
	return n > 0 && json.Valid(rw)
}

// nfReader rewrites non-finite tokens of a stream. Its output has exactly
// the length of its input, so offsets counted after it are offsets in the
// body. It rewrites in the caller's buffer, without a copy of its own.
type nfReader struct {
	r     io.Reader
	s     nfScanner
	small [2 * nfReserve]byte // for reads of nfReserve bytes or fewer
	rest  []byte              // output of a small read that did not fit
	err   error
}

// nfReserve is room for the bytes a scanner may hold back (7, a prefix of
// Infinity) and give back later.
const nfReserve = len("Infinity")

func newNFReader(r io.Reader) *nfReader { return &nfReader{r: r} }

func (r *nfReader) Read(p []byte) (int, error) {
	if len(r.rest) > 0 {
		n := copy(p, r.rest)
		r.rest = r.rest[n:]
		return n, nil
	}
	for {
		if r.err != nil {
			return 0, r.err
		}
		buf := p
		if len(p) <= nfReserve {
			buf = r.small[:nfReserve+1]
		}
		// Read past the reserve and rewrite forwards into the start: the
		// output is never ahead of the input by more than the bytes held
		// back, so no byte is overwritten before it is read.
		n, err := r.r.Read(buf[nfReserve:])
		out := r.s.scan(buf[:0], buf[nfReserve:nfReserve+n], true)
		if err != nil {
			out = r.s.flush(out)
			r.err = err
		}
		if len(p) <= nfReserve {
			k := copy(p, out)
			r.rest = out[k:]
			out = out[:k]
		}
		if len(out) > 0 {
			return len(out), nil
		}
	}
}

// unmarshalRaw is json.Unmarshal for bodies the server wrote: NaN,
// Infinity and -Infinity are accepted and kept as they were written in
// every json.RawMessage of v (a pointer to one of this package's types).
func unmarshalRaw(b []byte, v any) error {
	rw, n := rewriteNonFinite(b)
	if err := json.Unmarshal(rw, v); err != nil {
		return err
	}
	if n > 0 {
		restoreIn(reflect.ValueOf(v))
	}
	return nil
}

// restoreIn restores the raw values held anywhere in v.
func restoreIn(v reflect.Value) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		restoreNonFinite(v.Bytes())
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			restoreIn(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				restoreIn(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			restoreIn(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			restoreIn(it.Value()) // a RawMessage value shares its bytes
		}
	}
}

// Unmarshal is json.Unmarshal for the JSON that the Python server writes.
// It also reads NaN, Infinity and -Infinity, which this package keeps as
// written in raw values (ChatMessage.Structure, SlyData values,
// ChatContext, Extra), and which encoding/json rejects. They become
// math.NaN(), math.Inf(1) and math.Inf(-1) in a float64 or float32, in a
// pointer to one, and in an interface value (as float64), at any depth of
// structs, maps, slices and arrays; in any other type (an int, a string)
// they are an error that names the value's path. Everything else is
// decoded exactly as json.Unmarshal decodes it.
func Unmarshal(data []byte, v any) (err error) {
	defer errd.Wrap(&err, "neurosan: unmarshal")
	rw, n := rewriteNonFinite(data)
	if n == 0 {
		return json.Unmarshal(data, v)
	}
	spots, err := nonFiniteSpots(rw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(nullMarkers(rw), v); err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	for _, s := range spots {
		if err := setAt(rv.Elem(), s.path, s.f); err != nil {
			return fmt.Errorf("%s at %s: %w", formatFloat(s.f), pathString(s.path), err)
		}
	}
	return nil
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f > 0:
		return "Infinity"
	}
	return "-Infinity"
}

// spot is where a non-finite value sits: object keys (string) and array
// indexes (int) from the top.
type spot struct {
	path []any
	f    float64
}

// nonFiniteSpots finds the markers of rewritten text and their paths.
func nonFiniteSpots(rw []byte) ([]spot, error) {
	dec := json.NewDecoder(bytes.NewReader(rw))
	dec.UseNumber()
	type frame struct {
		object  bool
		key     any // the member's key, or the element's index
		next    int // arrays: the index of the next element
		wantKey bool
	}
	var stack []frame
	var spots []spot
	done := func() { // a value ended
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return spots, nil
		}
		if err != nil {
			return nil, err
		}
		n := len(stack)
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			done()
			continue
		}
		if n > 0 && stack[n-1].object && stack[n-1].wantKey {
			stack[n-1].key, stack[n-1].wantKey = tok, false
			continue
		}
		if n > 0 && !stack[n-1].object {
			stack[n-1].key = stack[n-1].next
			stack[n-1].next++
		}
		switch t := tok.(type) {
		case json.Delim:
			stack = append(stack, frame{object: t == '{', wantKey: t == '{'})
			continue
		case json.Number:
			if strings.Contains(string(t), "E") {
				f := math.NaN()
				if strings.Contains(string(t), "+") {
					f = math.Inf(1)
					if t[0] == '-' {
						f = math.Inf(-1)
					}
				}
				p := make([]any, n)
				for i, fr := range stack {
					p[i] = fr.key
				}
				spots = append(spots, spot{path: p, f: f})
			}
		}
		done()
	}
}

// nullMarkers returns rewritten text with each marker replaced by null.
func nullMarkers(rw []byte) []byte {
	out := make([]byte, 0, len(rw))
	var strs jsonstr.Tracker
	for i := 0; i < len(rw); i++ {
		c := rw[i]
		switch {
		case !strs.Outside(c):
		case c == 'E':
			out = out[:len(out)-1] // the marker's first digit
			if len(out) > 0 && out[len(out)-1] == '-' {
				out = out[:len(out)-1]
			}
			out = append(out, "null"...)
			if rw[i+1] == '0' {
				i++ // 0E0
			} else {
				i += len("+00000")
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// setAt stores f at path in v, where json.Unmarshal stored a null.
func setAt(v reflect.Value, path []any, f float64) error {
	for {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
			continue
		}
		if v.Kind() != reflect.Interface {
			break
		}
		if len(path) == 0 {
			if v.NumMethod() != 0 {
				return fmt.Errorf("cannot be stored in %s", v.Type())
			}
			v.Set(reflect.ValueOf(f))
			return nil
		}
		if v.IsNil() {
			return errors.New("has no container to go in")
		}
		v = v.Elem() // a map (a reference) or a slice (addressable elements)
	}
	if len(path) == 0 {
		if v.Kind() != reflect.Float32 && v.Kind() != reflect.Float64 {
			return fmt.Errorf("cannot be stored in %s", v.Type())
		}
		v.SetFloat(f)
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		idx, ok := jsonField(v.Type(), path[0].(string))
		if !ok {
			return nil // a key that json.Unmarshal ignores too
		}
		fv, err := v.FieldByIndexErr(idx)
		if err != nil {
			return err
		}
		return setAt(fv, path[1:], f)
	case reflect.Map:
		return setInMap(v, path, f)
	case reflect.Slice, reflect.Array:
		i, ok := path[0].(int)
		if !ok || i >= v.Len() {
			return nil // json.Unmarshal dropped it (a short array)
		}
		return setAt(v.Index(i), path[1:], f)
	}
	return fmt.Errorf("cannot be stored in %s", v.Type())
}

func setInMap(m reflect.Value, path []any, f float64) error {
	k := path[0].(string)
	var key reflect.Value
	switch kt := m.Type().Key(); {
	case kt.Kind() == reflect.String:
		key = reflect.ValueOf(k).Convert(kt)
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return err
		}
		key = reflect.ValueOf(n).Convert(kt)
	default:
		return fmt.Errorf("cannot be stored in %s", m.Type())
	}
	elem := reflect.New(m.Type().Elem()).Elem()
	if cur := m.MapIndex(key); cur.IsValid() {
		elem.Set(cur)
	}
	if err := setAt(elem, path[1:], f); err != nil {
		return err
	}
	m.SetMapIndex(key, elem)
	return nil
}

// jsonField finds the struct field that encoding/json decodes key into:
// by its tag name or field name, an exact match first, then one that
// differs in case; promoted fields of embedded structs count, the
// shallowest (then the tagged) winning.
func jsonField(t reflect.Type, key string) ([]int, bool) {
	type field struct {
		name   string
		index  []int
		depth  int
		tagged bool
	}
	var fields []field
	type level struct {
		t     reflect.Type
		index []int
	}
	seen := map[reflect.Type]bool{}
	for depth, queue := 0, []level{{t, nil}}; len(queue) > 0; depth++ {
		var next []level
		for _, l := range queue {
			if seen[l.t] {
				continue
			}
			seen[l.t] = true
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				index := append(append([]int(nil), l.index...), i)
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, level{ft, index})
					continue
				}
				if !sf.IsExported() {
					continue
				}
				fields = append(fields, field{name: cmp.Or(name, sf.Name), index: index, depth: depth, tagged: name != ""})
			}
		}
		queue = next
	}
	// The dominant field of each name: the shallowest, then the tagged.
	dominant := func(name string) ([]int, bool) {
		var best []field
		for _, f := range fields {
			if f.name != name {
				continue
			}
			if len(best) == 0 || f.depth < best[0].depth {
				best = []field{f}
			} else if f.depth == best[0].depth {
				best = append(best, f)
			}
		}
		if len(best) > 1 {
			var tagged []field
			for _, f := range best {
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
			best = tagged
		}
		if len(best) != 1 {
			return nil, false
		}
		return best[0].index, true
	}
	if idx, ok := dominant(key); ok {
		return idx, true
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			if idx, ok := dominant(f.name); ok {
				return idx, true
			}
		}
	}
	return nil, false
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		switch p := p.(type) {
		case string:
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
		case int:
			b.WriteString(strconv.Itoa(p))
		}
	}
	if b.Len() == 0 {
		return "the top"
	}
	return b.String()
}
