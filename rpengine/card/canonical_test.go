package card

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"
	gjcs "github.com/gowebpki/jcs"
)

const conformanceDir = "../../testdata/conformance"

func TestAppendCanonical_conformance(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"jcs", "jcs/gowebpki-extra"} {
		inputs, err := filepath.Glob(filepath.Join(conformanceDir, dir, "input", "*.json"))
		testutil.Success(t, err)
		if len(inputs) == 0 {
			t.Fatalf("no vectors in %s", dir)
		}
		for _, in := range inputs {
			t.Run(dir+"/"+filepath.Base(in), func(t *testing.T) {
				t.Parallel()
				src, err := os.ReadFile(in)
				testutil.Success(t, err)
				want, err := os.ReadFile(filepath.Join(conformanceDir, dir, "output", filepath.Base(in)))
				testutil.Success(t, err)
				got, err := AppendCanonical(nil, src)
				testutil.Success(t, err)
				testutil.Equal(t, "canonical", string(got), string(want))
				oracle, err := gjcs.Transform(src)
				testutil.Success(t, err)
				testutil.Equal(t, "vs jcs", string(got), string(oracle))
			})
		}
	}
}

// TestAppendCanonical_es6Numbers checks number printing on the ES6 vector
// and RFC 8785 Appendix B.
func TestAppendCanonical_es6Numbers(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, file string) int {
		f, err := os.Open(filepath.Join(conformanceDir, "jcs/es6numbers", file))
		testutil.Success(t, err)
		defer f.Close()
		n := 0
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Split(s.Text(), ",")
			bits, err := strconv.ParseUint(fields[0], 16, 64)
			testutil.Success(t, err)
			v := math.Float64frombits(bits)
			if fields[1] == "" { // NaN and Infinity cannot be written in JSON
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					t.Fatalf("line %q: empty expectation for a finite number", s.Text())
				}
				continue
			}
			got := string(jcs.AppendNumber(nil, v))
			if got != fields[1] {
				t.Fatalf("%s: %x: got %s, want %s", file, bits, got, fields[1])
			}
			// And through the parser, from the shortest round-trip text.
			src := strconv.FormatFloat(v, 'g', -1, 64)
			canon, err := AppendCanonical(nil, []byte(src))
			testutil.Success(t, err)
			testutil.Equal(t, src, string(canon), fields[1])
			n++
		}
		testutil.Success(t, s.Err())
		return n
	}
	testutil.Equal(t, "es6 lines", check(t, "es6testfile_10000.txt"), 10000)
	testutil.Equal(t, "appendix B", check(t, "rfc8785-appendix-b-numbers.csv"), 24)
}

func TestCard_Hash_upstreamVector(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"data":{"age":4,"name":"Ari","tags":["a"]},"spec":"chara_card_v2"}`))
	testutil.Success(t, err)
	d := c.Hash()
	testutil.Equal(t, "hash", d.String(), "71981de431e9b5327456a39a3eed23fb6eabb68efdd050f271c222f6f50a8b31")
}

func TestAppendCanonical_expectedSHA256(t *testing.T) {
	t.Parallel()
	list, err := os.ReadFile(filepath.Join(conformanceDir, "jcs/expected-sha256.txt"))
	testutil.Success(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, rel, _ := strings.Cut(line, "  ")
		in := strings.Replace(rel, "output", "input", 1)
		src, err := os.ReadFile(filepath.Join(conformanceDir, "jcs", in))
		testutil.Success(t, err)
		canon, err := AppendCanonical(nil, src)
		testutil.Success(t, err)
		d := sha256.Sum256(canon)
		testutil.Equal(t, rel, hex.EncodeToString(d[:]), sum)
	}
}
