//go:build goexperiment.jsonv2

package card

import (
	"bytes"
	"encoding/json/jsontext"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendCanonical_jsontext is a second, independent oracle:
// encoding/json/jsontext's RFC 8785 canonicalization. Run it with
// GOEXPERIMENT=jsonv2 go test -run jsontext ./rpengine/card.
func TestAppendCanonical_jsontext(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := &docGen{r: rand.New(rand.NewPCG(seed, 4))}
	for i := 0; i < 2000; i++ {
		g.b = g.b[:0]
		g.value(4)
		ours, err := AppendCanonical(nil, g.b)
		v := jsontext.Value(bytes.Clone(g.b))
		verr := v.Canonicalize()
		if (err == nil) != (verr == nil) {
			t.Fatalf("%q: ours %v, jsontext %v", g.b, err, verr)
		}
		if err == nil && !bytes.Equal(ours, v) {
			t.Fatalf("%q:\nours     %q\njsontext %q", g.b, ours, []byte(v))
		}
	}
}
