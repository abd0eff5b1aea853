package card

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// predictedDoc is a card whose lorebook has n entries of one shape, as
// exporters write them (keys out of order, an array of keys, an
// extensions object, an empty array), the entry at index i (every entry
// when i is -1) with its text passed through mutate.
func predictedDoc(n, i int, mutate func(string) string) []byte {
	return predictedDocOf(func(k int) string {
		return fmt.Sprintf(`{"keys":["place%d","café \"q\" 東京"],"content":"text of entry %d.\nwith \\ escapes — and more","extensions":{"weight":%d},"enabled":true,"insertion_order":%d,"case_sensitive":false,"name":"entry %d","priority":%d,"id":%d,"comment":"c","selective":false,"secondary_keys":[],"constant":false,"position":"before_char"}`,
			k, k, k%7, k, k, k%10, k)
	}, n, i, mutate)
}

// exporterEntry is entry k as SillyTavern exports them: an extensions
// object of its own, out of order.
func exporterEntry(k int) string {
	return fmt.Sprintf(`{"id":%[1]d,"keys":["place%[1]d","b"],"secondary_keys":[],"comment":"c","content":"text of entry %[1]d","constant":false,"selective":true,"insertion_order":%[1]d,"enabled":true,"position":"before_char","use_regex":true,"extensions":{"position":0,"exclude_recursion":false,"display_index":%[1]d,"probability":100,"useProbability":true,"depth":4,"group":"","scan_depth":null,"role":-1}}`, k)
}

// predictedDocOf is predictedDoc with entry k entry(k).
func predictedDocOf(entry func(k int) string, n, i int, mutate func(string) string) []byte {
	var b strings.Builder
	b.WriteString(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"d","personality":"","scenario":"","first_mes":"hi","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"tags":["a"],"creator":"","character_version":"1","extensions":{},"character_book":{"name":"World","extensions":{},"entries":[`)
	for k := range n {
		if k > 0 {
			b.WriteByte(',')
		}
		e := entry(k)
		if mutate != nil && (k == i || i == -1) {
			e = mutate(e)
		}
		b.WriteString(e)
	}
	b.WriteString(`]}}}`)
	return []byte(b.String())
}

// passResult is what the first pass makes of a document.
type passResult struct {
	out, err          string
	invalid, unsafe   bool
	predicted, nested int
}

func firstPass(doc []byte, check, slow bool) passResult {
	c := &canon{src: doc, check: check, slow: slow}
	var r passResult
	if err := c.run(); err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			return passResult{err: err.Error()}
		}
		r.err = fmt.Sprintf("%s at offset %d: %s", pe.Pointer, pe.Offset, pe.Msg)
	} else {
		r.out = string(c.appendTo(nil))
	}
	r.invalid, r.unsafe, r.predicted = c.invalid, c.unsafe, c.predicted
	return r
}

// checkPredictedSame compares the first pass with and without
// canon.predictedObject on doc, with and without the card rules, and
// the rules' verdict with the validator's (on an object: Parse checks
// the rules of nothing else). It returns how many objects
// predictedObject took.
func checkPredictedSame(t *testing.T, name string, doc []byte) (predicted int) {
	t.Helper()
	for _, check := range []bool{true, false} {
		fast, slow := firstPass(doc, check, false), firstPass(doc, check, true)
		if slow.predicted != 0 {
			t.Fatalf("%s: the slow pass took %d objects whole", name, slow.predicted)
		}
		fast.predicted = 0
		if fast != slow {
			t.Errorf("%s (check %v):\nfast %+v\nslow %+v\ndoc %s", name, check, fast, slow, doc)
		}
		if check && fast.err == "" && doc[0] == '{' && fast.invalid != (len(validateCanonical([]byte(fast.out))) > 0) {
			t.Errorf("%s: invalid %v, the validator says %v", name, fast.invalid, validateCanonical([]byte(fast.out)))
		}
		predicted = firstPass(doc, check, false).predicted
	}
	return predicted
}

// TestCanonical_predictedObjects mutates one lorebook entry of a card
// (the first, which teaches the shape, a middle one and the last) in
// every way predictedObject must notice (and every entry in the same way,
// the shape then breaking a rule), and checks that the first pass
// makes of it what it makes taking every object member by member: the
// same canonical form, error (pointer, offset and message) and verdict
// on the card rules. Issue #24.
func TestCanonical_predictedObjects(t *testing.T) {
	t.Parallel()
	const n = 5
	if got := checkPredictedSame(t, "unchanged", predictedDoc(n, -1, nil)); got != n-1 {
		t.Errorf("predictedObject took %d entries, want %d", got, n-1)
	}
	repl := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				panic("no " + old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	keys := `"keys":["place`
	muts := map[string]func(string) string{
		// The card rules.
		"enabled a string":      repl(`"enabled":true`, `"enabled":"yes"`),
		"enabled null":          repl(`"enabled":true`, `"enabled":null`),
		"position other":        repl(`"before_char"`, `"middle"`),
		"position after":        repl(`"before_char"`, `"after_char"`),
		"position escaped":      repl(`"before_char"`, `"before\u005fchar"`),
		"keys a string":         repl(keys, `"keys":"x","y":["place`),
		"keys not strings":      repl(keys, `"keys":[1,"place`),
		"keys empty":            repl(`"keys":["place`, `"keys":[],"x":["place`),
		"secondary not strings": repl(`"secondary_keys":[]`, `"secondary_keys":[1]`),
		"secondary strings":     repl(`"secondary_keys":[]`, `"secondary_keys":["a","b"]`),
		"secondary null":        repl(`"secondary_keys":[]`, `"secondary_keys":null`),
		"extensions array":      repl(`"extensions":{"weight"`, `"extensions":[],"x":{"weight"`),
		"content a number":      repl(`"content":"text`, `"content":1,"x":"text`),
		"insertion a string":    repl(`"insertion_order":`, `"insertion_order":"1","x":`),
		"no content":            repl(`"content":"text`, `"contenu":"text`),
		// The shape.
		"a member fewer":      repl(`,"constant":false`, ``),
		"a member more":       repl(`,"position"`, `,"extra":1,"position"`),
		"two members swapped": repl(`"selective":false,"secondary_keys":[]`, `"secondary_keys":[],"selective":false`),
		"duplicate key":       repl(`"comment":"c"`, `"name":"c"`),
		"escaped key":         repl(`"comment":`, `"comm\u0065nt":`),
		"white space":         repl(`,"id":`, `, "id" :`),
		"white space inside":  repl(`{"weight":`, `{ "weight":`),
		// Values that parse rewrites or rejects.
		"escape rewritten":   repl(`"c"`, `"\u0063\/"`),
		"invalid escape":     repl(`"comment":"c"`, `"comment":"\q"`),
		"control byte":       repl(`"comment":"c"`, "\"comment\":\"\x01\""),
		"invalid UTF-8":      repl(`"comment":"c"`, "\"comment\":\"\xff\""),
		"lone surrogate":     repl(`"comment":"c"`, `"comment":"\ud800"`),
		"number rewritten":   repl(`"priority":`, `"priority":1.50,"x":`),
		"leading zero":       repl(`"id":`, `"id":0`),
		"number too big":     repl(`"id":`, `"id":1e999,"x":`),
		"hash-unsafe number": repl(`"id":`, `"id":123456789012345678901,"x":`),
		"negative":           repl(`"id":`, `"id":-`),
		"literal cut":        repl(`"enabled":true`, `"enabled":tru`),
		"literal longer":     repl(`"enabled":true`, `"enabled":truer`),
		"false cut":          repl(`"selective":false`, `"selective":fals`),
		"false other":        repl(`"selective":false`, `"selective":fakse`),
		"null":               repl(`"selective":false`, `"selective":null`),
		"cut":                func(s string) string { return s[:len(s)/2] },
		"unterminated":       repl(`"c"`, `"c`),
		"no comma":           repl(`,"id":`, `"id":`),
		"trailing comma":     func(s string) string { return s[:len(s)-1] + `,}` },
		"no close":           func(s string) string { return s[:len(s)-1] },
		"extra close":        func(s string) string { return s + `}` },
		// The nested containers.
		"keys array cut":          repl(`"keys":["place`, `"keys":["x",]`+`,"y":["place`),
		"keys array no comma":     repl(`"keys":["place`, `"keys":["x" "y"],"z":["place`),
		"keys array white space":  repl(`"keys":["place`, `"keys":[ "place`),
		"keys array escape":       repl(`"keys":["place`, `"keys":["\u0070lace`),
		"keys array bad escape":   repl(`"keys":["place`, `"keys":["\xplace`),
		"keys array object":       repl(`"keys":["place`, `"keys":[{"b":1,"a":2},"place`),
		"keys array nested":       repl(`"keys":["place`, `"keys":[["x"],"place`),
		"extensions empty":        repl(`{"weight":`, `{},"x":{"weight":`),
		"extensions value cut":    repl(`{"weight":`, `{"weight":}`+`,"x":{"weight":`),
		"extensions two in order": repl(`{"weight":`, `{"a":[],"weight":`),
		"extensions out of order": repl(`{"weight":`, `{"zz":1,"weight":`),
		"extensions duplicate":    repl(`{"weight":`, `{"weight":1,"weight":`),
		"extensions empty dup":    repl(`{"weight":`, `{"":1,"":`),
		"extensions empty key":    repl(`{"weight":`, `{"":1,"weight":`),
		"extensions non-ASCII":    repl(`{"weight":`, `{"\ue000":1,"😀":`),
		"extensions escaped key":  repl(`{"weight":`, `{"we\u0069ght":`),
		"extensions escaped key2": repl(`{"weight":`, `{"a\"b":1,"weight":`),
		"extensions rewritten":    repl(`{"weight":`, `{"weight":1.0,"x":`),
		"extensions object":       repl(`{"weight":`, `{"a":{"d":1,"c":2},"weight":`),
		"extensions inner array":  repl(`{"weight":`, `{"a":["x"],"weight":`),
		"extensions no colon":     repl(`{"weight":`, `{"weight"`),
		"extensions key cut":      repl(`{"weight":`, `{"weight`),
		"extensions bad key":      repl(`{"weight":`, `{weight:`),
	}
	if got := checkPredictedSame(t, "exporter's", predictedDocOf(exporterEntry, n, -1, nil)); got != n-1 {
		t.Errorf("predictedObject took %d exporter's entries, want %d", got, n-1)
	}
	// An exporter's entry, whose extensions object is out of order.
	for name, mut := range map[string]func(string) string{
		"inner not plain":      repl(`"depth":4`, `"depth":4.5`),
		"inner array":          repl(`"depth":4`, `"depth":[4]`),
		"inner object":         repl(`"depth":4`, `"depth":{"b":1,"a":2}`),
		"inner key":            repl(`"role":`, `"rolf":`),
		"inner white space":    repl(`"group":""`, `"group": ""`),
		"inner duplicate":      repl(`"scan_depth":null`, `"depth":null`),
		"inner error":          repl(`"role":-1`, `"role":-`),
		"inner escape":         repl(`"group":""`, `"group":"A"`),
		"inner bad string":     repl(`"group":""`, "\"group\":\"\x01\""),
		"inner a member fewer": repl(`,"group":""`, ``),
		"inner a member more":  repl(`"role":-1`, `"role":-1,"x":1`),
		"inner cut":            repl(`"role":-1}`, `"role":-1`),
		"inner empty":          repl(`"extensions":{"position":0,`, `"extensions":{},"x":{"position":0,`),
		"two inner":            repl(`"use_regex":true`, `"use_regex":{"b":1,"a":2}`),
		"two inner, one shape": repl(`"use_regex":true`, `"use_regex":{"position":0,"exclude_recursion":false,"display_index":1,"probability":100,"useProbability":true,"depth":4,"group":"","scan_depth":null,"role":-1}`),
		"five inner":           repl(`"keys":`, `"a":{"b":1,"a":2},"b":{"b":1,"a":2},"c":{"b":1,"a":2},"d":{"b":1,"a":2},"keys":`),
		"outer not plain":      repl(`"keys":["place`, `"keys":[1,"place`),
		"outer rule broken":    repl(`"enabled":true`, `"enabled":1`),
	} {
		for _, i := range []int{0, 2, n - 1, -1} {
			checkPredictedSame(t, fmt.Sprintf("exporter's, %s at entry %d", name, i), predictedDocOf(exporterEntry, n, i, mut))
		}
	}
	for name, mut := range muts {
		for _, i := range []int{0, 2, n - 1, -1} {
			checkPredictedSame(t, fmt.Sprintf("%s at entry %d", name, i), predictedDoc(n, i, mut))
		}
		// An object of the entries' shape at their depth before them,
		// where no rules apply: the first entry is predicted from it, and
		// the shape's rules are first checked there.
		doc := string(predictedDoc(n, -1, mut))
		entry := doc[strings.Index(doc, `"entries":[`)+len(`"entries":[`):]
		entry = entry[:strings.Index(entry, `},{"keys"`)+1]
		doc = strings.Replace(doc, `"extensions":{}`, `"extensions":{"x":{"y":`+entry+`}}`, 1)
		checkPredictedSame(t, name+" after one elsewhere", []byte(doc))
	}
}

// TestCanonical_predictedObjectsRandom damages a lorebook at random (of
// entries as the benchmarks' and as an exporter's), a byte or a few at
// a time, and compares the first pass with and without
// predictedObject as TestCanonical_predictedObjects does. Issue #24.
func TestCanonical_predictedObjectsRandom(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 24))
	bases := [][]byte{predictedDoc(6, -1, nil), predictedDocOf(exporterEntry, 6, -1, nil)}
	const alphabet = "\"{}[],: 0179-.etfnul\\ax\x01\xff\xc3\xa9"
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for it := range iters {
		base := bases[it%len(bases)]
		from := strings.Index(string(base), `"entries":[`)
		doc := append([]byte(nil), base...)
		for range 1 + r.IntN(3) {
			at := from + r.IntN(len(doc)-from)
			switch r.IntN(4) {
			case 0:
				doc[at] = alphabet[r.IntN(len(alphabet))]
			case 1:
				doc = append(doc[:at], append([]byte{alphabet[r.IntN(len(alphabet))]}, doc[at:]...)...)
			case 2:
				doc = append(doc[:at], doc[at+1:]...)
			default: // a span of the document again
				s := from + r.IntN(len(doc)-from)
				e := min(len(doc), s+r.IntN(40))
				doc = append(doc[:at], append(append([]byte(nil), doc[s:e]...), doc[at:]...)...)
			}
		}
		checkPredictedSame(t, "random", doc)
	}
}

// TestCanonical_predictedObjectMisses checks that predictedObject stops
// trying a shape whose objects it fails to take maxWholeMisses times in
// a row (an exporter's entries with extensions out of order, which it
// would scan twice each), and goes on after fewer. Issue #24.
func TestCanonical_predictedObjectMisses(t *testing.T) {
	t.Parallel()
	plain := `{"b":1,"a":"x","e":{"w":1}}`
	other := `{"b":1,"a":"x","e":[1]}` // the same keys, a value not plain
	for _, tc := range []struct {
		misses, want int
	}{{0, 5}, {1, 5}, {3, 5}, {4, 0}, {7, 0}} { // maxWholeMisses is 4
		objs := []string{plain}
		for range tc.misses {
			objs = append(objs, other)
		}
		for range 5 {
			objs = append(objs, plain)
		}
		doc := []byte("[" + strings.Join(objs, ",") + `,"the end, past the words predictedObject reads"]`)
		if got := checkPredictedSame(t, fmt.Sprintf("%d misses", tc.misses), doc); got != tc.want {
			t.Errorf("after %d misses predictedObject took %d objects, want %d", tc.misses, got, tc.want)
		}
	}
}
