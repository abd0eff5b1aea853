package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/cards.golden")

const goldenFile = "testdata/cards.golden"

// goldenCard is one card of the golden test, with the name it has there:
// "testdata/<file>" for the repository's cards, "shared/<file>" for the
// real cards read in place from the shared folder.
type goldenCard struct {
	name string
	data []byte
}

func goldenCards(t *testing.T) (cards []goldenCard, shared bool) {
	files, _ := filepath.Glob(filepath.Join(cardsDir, "*.json"))
	for _, f := range files {
		cards = append(cards, goldenCard{"testdata/" + filepath.Base(f), readCard(t, filepath.Base(f))})
	}
	if dir := sharedCards(t); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			testutil.Success(t, err)
			cards = append(cards, goldenCard{"shared/" + filepath.Base(f), b})
		}
		shared = true
	}
	return cards, shared
}

// short is a digest of b: its length and the first 16 hex digits of its
// SHA-256. The golden file holds no card content.
func short(b []byte) string {
	s := sha256.Sum256(b)
	return strconv.Itoa(len(b)) + ":" + hex.EncodeToString(s[:8])
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return "error " + strconv.Quote(err.Error())
}

// goldenLines describes what the package does with each card: its hash,
// canonical bytes, validation verdict, numbers, and what Load and Repair
// change; and for every ordered pair of cards that Load accepts, the
// transfer a Planner that holds the first chooses for the second and the
// sizes of its patch and of Diff's. Each line is "key\tvalue".
func goldenLines(t *testing.T, cards []goldenCard) (lines []string, patches map[string][2][]byte) {
	add := func(key, format string, args ...any) {
		lines = append(lines, key+"\t"+fmt.Sprintf(format, args...))
	}
	type loaded struct {
		name string
		c    *Card
	}
	var ok []loaded
	for _, gc := range cards {
		n := gc.name
		canon, err := AppendCanonical(nil, gc.data)
		if err != nil {
			add(n+" canonical", "%s", errText(err))
		} else {
			add(n+" canonical", "%s", short(canon))
		}
		c, err := Parse(gc.data)
		if err != nil {
			add(n+" parse", "%s", errText(err))
		} else {
			add(n+" parse", "hash %s", c.Hash())
			add(n+" validate", "%s", errText(c.Validate()))
			add(n+" numbers", "%s", errText(c.CheckNumbers()))
			if name := c.Name(); strings.HasPrefix(n, "shared/") {
				add(n+" name", "%s", short([]byte(name))) // no content of theirs
			} else {
				add(n+" name", "%q", name)
			}
		}
		for _, f := range []struct {
			op string
			fn func([]byte) (*Card, []Change, error)
		}{{"load", Load}, {"repair", Repair}} {
			c, changes, err := f.fn(gc.data)
			add(n+" "+f.op, "%s", errText(err))
			for i, ch := range changes {
				add(n+" "+f.op+" change "+strconv.Itoa(i), "%s", ch)
			}
			if c != nil {
				add(n+" "+f.op+" card", "bytes %s hash %s", short(c.Bytes()), c.Hash())
				if f.op == "load" && err == nil {
					ok = append(ok, loaded{n, c})
				}
			}
		}
	}
	patches = map[string][2][]byte{}
	key := Key{IntegrationID: "golden", CharacterID: "pair"}
	for _, a := range ok {
		for _, b := range ok {
			n := "pair " + a.name + " -> " + b.name
			p := NewPlanner(nil)
			p.Accepted(key, a.c, a.c.Hash())
			tr, err := p.Plan(key, b.c)
			testutil.Success(t, err)
			add(n+" plan", "%s", tr.Mode)
			if tr.Mode == ModePatch {
				add(n+" plan patch bytes", "%d", len(tr.Patch))
			}
			d, err := Diff(a.c, b.c)
			if err != nil {
				add(n+" diff", "%s", errText(err))
				continue
			}
			add(n+" diff patch bytes", "%d", len(d))
			patches[n] = [2][]byte{tr.Patch, d}
			checkPatches(t, n, a.c, b.c, tr.Patch, d)
		}
	}
	return lines, patches
}

// checkPatches checks what the golden file cannot: applied to the base,
// each patch gives the target's exact canonical bytes.
func checkPatches(t *testing.T, name string, base, target *Card, patches ...[]byte) {
	want, err := AppendCanonical(nil, target.Bytes())
	testutil.Success(t, err)
	for _, p := range patches {
		if p == nil {
			continue
		}
		got, err := ApplyPatch(base.Bytes(), p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the patch does not give the target (%v)", name, err)
		}
	}
}

// TestGolden pins what the package does with every card of the
// repository and of the shared folder (issue #30: the rewrite of the
// canonicalizer, applier and Diff keeps it). A patch may change where it
// is no larger: its size in the golden file is a bound, and applied to
// the base it must give the target's exact canonical bytes. Run with
// -update to rewrite the golden file (the shared folder must be present).
func TestGolden(t *testing.T) {
	t.Parallel()
	cards, shared := goldenCards(t)
	lines, _ := goldenLines(t, cards)
	if *update {
		if !shared {
			t.Fatal("-update needs the shared cards")
		}
		testutil.Success(t, os.WriteFile(goldenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		return
	}
	b, err := os.ReadFile(goldenFile)
	testutil.Success(t, err)
	want := map[string]string{}
	var keys []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		k, v, _ := strings.Cut(l, "\t")
		if !shared && strings.Contains(k, "shared/") {
			continue
		}
		want[k] = v
		keys = append(keys, k)
	}
	got := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "\t")
		got[k] = v
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s, not in the golden file", k, v)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, w := got[k], want[k]
		switch {
		case g == w:
		case strings.HasSuffix(k, " patch bytes") && g != "" && atoi(g) <= atoi(w):
			// A smaller patch is allowed; checkPatches checked it applies.
		default:
			t.Errorf("%s: got %q, want %q", k, g, w)
		}
	}
	if len(keys) < 100 {
		t.Fatalf("only %d golden lines", len(keys))
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 1 << 62
	}
	return n
}
