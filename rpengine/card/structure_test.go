package card

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// randomJSON writes a random JSON value: nested objects and arrays, and
// strings full of the bytes that matter to a scan (quotes, runs of
// backslashes, brackets and commas inside strings).
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	switch k := r.IntN(10); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote("k" + strconv.Itoa(i) + strings.Repeat("\\", r.IntN(3))))
			b.WriteByte(':')
			randomJSON(r, b, depth-1)
		}
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth-1)
		}
		b.WriteByte(']')
	case k < 8:
		pieces := []string{`\\`, `\"`, `\\\"`, `\\\\`, "{", "}", "[", "]", ",", "é", "x", strings.Repeat("y", 40)}
		b.WriteByte('"')
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(4) == 0 {
			b.WriteString(`\\`) // a string that ends in a backslash
		}
		b.WriteByte('"')
	default:
		b.WriteString(strconv.Itoa(r.IntN(1000)))
	}
}

func randomCanonical(t *testing.T, r *rand.Rand) []byte {
	var b strings.Builder
	b.WriteString(`{"a":`)
	randomJSON(r, &b, 6)
	b.WriteString(`,"b":[`)
	randomJSON(r, &b, 6)
	b.WriteString(`]}`)
	doc, err := AppendCanonical(nil, []byte(b.String()))
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	return doc
}

// TestJSONBlocks checks the vector masks (AVX2 on amd64) against the
// byte loop on random bytes.
func TestJSONBlocks(t *testing.T) {
	t.Parallel()
	seed := uint64(6464)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	alphabet := []byte(`"\{}[],:a é` + "\x00\xff\x5b\x7b\x5d\x7d\x3c\x7c")
	for range 500 {
		p := make([]byte, r.IntN(2000))
		for i := range p {
			p[i] = alphabet[r.IntN(len(alphabet))]
		}
		got, want := make([]jsonBlock, 40), make([]jsonBlock, 40)
		n, m := jsonBlocks(p, got), jsonBlocksGeneric(p, want)
		if n != m || !slices.Equal(got, want) {
			t.Fatalf("%q: %d blocks %v, want %d %v", p, n, got, m, want)
		}
	}
}

// TestStructure checks the block scans of structure.go against the
// token-at-a-time ones: where every container of random canonical
// documents ends, and which containers are open at every offset.
// Issue #24 (Plan scanned the card's lorebook twice a token at a time).
func TestStructure(t *testing.T) {
	t.Parallel()
	seed := uint64(4646)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for range 300 {
		doc := randomCanonical(t, r)
		for i, c := range doc {
			if c != '{' && c != '[' {
				continue
			}
			// Outside strings only: the scalar scan tells which.
			if prefixOpen(doc, i) {
				if got, want := skipContainerFast(doc, i), skipValueGeneric(doc, i); got != want {
					t.Fatalf("%s: container at %d ends at %d, want %d", doc, i, got, want)
				}
			}
		}
		for pre := 0; pre <= len(doc); pre += 1 + r.IntN(7) {
			got, want := prefixPathFast(doc, pre, nil), prefixPathGeneric(doc, pre, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: path at %d %v, want %v", doc, pre, got, want)
			}
		}
	}
}

// prefixOpen reports whether doc[i] is a bracket outside strings.
func prefixOpen(doc []byte, i int) bool {
	p := prefixPathGeneric(doc, i+1, nil)
	return len(p) > 0 && p[len(p)-1].start == i
}

// skipValueGeneric is skipValue without the block scan.
func skipValueGeneric(doc []byte, i int) int {
	depth := 0
	for i < len(doc) {
		switch doc[i] {
		case '"':
			i = skipString(doc, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}

// TestCanonical_predictedShapes runs the cases where the expectation
// that an object has the keys of the object closed before it at its
// depth must fail, or the cache entry it names be reused meanwhile,
// against gowebpki/jcs: the parse falls back to reading each key, and
// the canonical form and errors are jcs's. Issue #24.
func TestCanonical_predictedShapes(t *testing.T) {
	t.Parallel()
	entry := `{"keys":["a"],"content":"x","id":1,"enabled":true}`
	for _, doc := range []string{
		`[` + entry + `,` + entry + `,` + entry + `]`,
		`[` + entry + `,{"keys":["a"],"content":"x","id":1,"enabled":true,"z":0}]`,   // one more key
		`[` + entry + `,{"keys":["a"],"content":"x","id":1}]`,                        // one fewer
		`[` + entry + `,{"keys":["a"],"content":"x","enabled":true,"id":1}]`,         // the same keys, another order
		`[` + entry + `,{"keys":["a"],"contenu":"x","id":1,"enabled":true}]`,         // a key of the same length
		`[` + entry + `,{"keys":["a"],"con\u0074ent":"x","id":1,"enabled":true}]`,    // an escape in a key
		`[` + entry + `,{"keys":["a"],"content":"x","id":1,"enabled":true,"id":2}]`,  // a duplicate past the shape
		`[` + entry + `,{"keys":["a"],"content":"x","content":"y","enabled":true}]`,  // a duplicate inside it
		`[` + entry + `,{ "keys" : ["a"], "content": "x" ,"id":1,"enabled":true}]`,   // white space
		`[` + entry + `,{"keys":{"b":1,"a":2},"content":"x","id":1,"enabled":true}]`, // a reordered object inside
		`[` + entry + `,{"keys":[{"d":1,"c":{"f":1,"e":2}},{"h":1,"g":2},{"j":1,"i":2},{"l":1,"k":2},{"n":1,"m":2},{"p":1,"o":2},{"r":1,"q":2},{"t":1,"s":2},{"v":1,"u":2},{"x":1,"w":2},{"z":1,"y":2},{"B":1,"A":2},{"D":1,"C":2},{"F":1,"E":2},{"H":1,"G":2},{"J":1,"I":2},{"L":1,"K":2}],"content":"x","id":1,"enabled":true},` + entry + `]`, // the cache entry reused inside
		`{"a":` + entry + `,"b":{"x":` + entry + `},"c":` + entry + `}`,     // the same shape at other depths
		`[` + entry + `,{"keys":["a"],"content":"x","id":1,"enabled":tru}]`, // an error in a predicted member
		`[` + entry + `,{"keys":["a"],"content":"x","id":1,"enab`,           // cut inside a predicted key
		// Keys compared by three words: one byte differs in each.
		`[{"b":0,"insertion_order":1,"a":2},{"b":0,"insertion_ordeR":1,"a":2}]`,
		`[{"b":0,"insertion_order":1,"a":2},{"b":0,"insertioN_order":1,"a":2}]`,
		`[{"b":0,"insertion_order":1,"a":2},{"b":0,"Insertion_order":1,"a":2}]`,
		`[{"b":0,"insertion_order":1,"a":2},{"b":0,"insertion_order ":1,"a":2}]`,
		`[{"b":0,"insertion_order_xyz":1,"a":2},{"b":0,"insertion_order_xyZ":1,"a":2}]`, // 24 bytes quoted
		`[{"b":0,"insertion_order_wxyz":1,"a":2},{"b":0,"insertion_order_wxyZ":1,"a":2}]`,
	} {
		checkAgainstJCS(t, []byte(doc))
	}
	// Each kind of value a predicted member may have, at the first, a
	// middle and the last member (canon.predictedMembers takes the plain
	// ones and leaves the rest to parse), in documents that are valid
	// UTF-8 and in ones that are not (another string scan; an error).
	values := []string{
		`"plain"`, `"a string of more than sixteen bytes, then some"`, `"esc\"aped\n"`, `"\u00e9t\u00E9"`, `"sl\/ash"`,
		`"café 東京"`, `""`, `0`, `7`, `42`, `07`, `100`, `-12`, `123456789012345`, `1234567890123456`, `1.5`, `1e3`, `-0`, `0.10`, `true`, `false`, `null`,
		`[]`, `["a"]`, `[1,"a"]`, `{}`, `{"z":1,"y":2}`, ` 1`, `1 `, `"x" `, "\"\xff\"",
	}
	shape := func(a, b, d string) string { return `{"a":` + a + `,"b":` + b + `,"c":true,"d":` + d + `}` }
	plain := shape(`"x"`, `1`, `"y"`)
	for _, v := range values {
		for _, e := range []string{shape(v, `1`, `"y"`), shape(`"x"`, v, `"y"`), shape(`"x"`, `1`, v)} {
			for _, tail := range []string{"", ",\"\xfe\""} {
				checkAgainstJCS(t, []byte(`[`+plain+`,`+plain+`,`+e+`,`+plain+tail+`]`))
			}
		}
	}
}

// TestCanonical_predictedShapeErrors checks the errors met in objects of
// a predicted shape: where parse takes a member again after
// canon.predictedMembers took the ones before it, the pointer names the
// member. Issue #24.
func TestCanonical_predictedShapeErrors(t *testing.T) {
	t.Parallel()
	entry := `{"a":"x","b":1,"c":true,"d":"y"}`
	for _, tc := range []struct{ doc, pointer, msg string }{
		{`[` + entry + `,{"a":"x","b":1 x}]`, "/1/b", "expected ',' or '}' in object"},
		{`[` + entry + `,{"a":"x","b":1,"c":tru}]`, "/1/c", "invalid literal, expected true"},
		{`[` + entry + `,{"a":"x","b":01}]`, "/1/b", "expected ',' or '}' in object"},
		{`[` + entry + `,{"a":"x","b":1,"c":true,"d":"y","a":"z"}]`, "/1/a", `duplicate key "a"`},
		{`[` + entry + `,{"a":"x","b":1,"c":true,"d":"\q"}]`, "/1/d", "invalid escape"},
		{`[` + entry + `,{"a":"x","b":1,"c":true,"d":"y"`, "/1/d", "unexpected end of input in object"},
		{`[` + entry + `,{"a":"x","b":1,"c":true,"d":"y"]`, "/1/d", "expected ',' or '}' in object"},
		{`[` + entry + `,{"a":"x","b":[],"c":true}x]`, "/1", "expected ',' or ']' in array"},
		{`[` + entry + `,{"a":"x","b":1,"c":true,"d":"y",}]`, "/1", "expected a string key in object"},
	} {
		_, err := AppendCanonical(nil, []byte(tc.doc))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Pointer != tc.pointer || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("%s: %v, want %q at %q", tc.doc, err, tc.msg, tc.pointer)
		}
	}
}
