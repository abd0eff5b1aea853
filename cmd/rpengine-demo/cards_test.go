package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
)

// sentCards returns the card descriptors of the reply.requests in a
// --record file, and the hashes the engine answered with.
func sentCards(t *testing.T, file string) (snapshots []json.RawMessage, targets, resolved []string) {
	t.Helper()
	f, err := os.Open(file)
	testutil.Success(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Msg struct {
				Type string `json:"type"`
				Card *struct {
					Mode       string          `json:"mode"`
					Snapshot   json.RawMessage `json:"snapshot"`
					TargetHash string          `json:"targetHash"`
				} `json:"card"`
				Resolved string `json:"resolvedCardHash"`
			} `json:"msg"`
		}
		testutil.Success(t, json.Unmarshal(sc.Bytes(), &l))
		switch m := l.Msg; {
		case m.Type == "reply.request" && m.Card != nil && m.Card.Mode == "snapshot":
			snapshots = append(snapshots, m.Card.Snapshot)
			targets = append(targets, m.Card.TargetHash)
		case m.Type == "reply.accepted":
			resolved = append(resolved, m.Resolved)
		}
	}
	testutil.Success(t, sc.Err())
	return snapshots, targets, resolved
}

// Issue #18: every real card in the shared folder works in the demo as
// exported (--card FILE --engine sim): the simulated engine, which checks
// cards with the engine's rules, accepts what is sent; what is sent is
// the card as card.Load repaired it, and the hash the engine resolves is
// that card's hash. Repairs are shown as notes.
func TestCards_shared(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t, "cards"), "*.json"))
	if len(files) < 10 {
		t.Fatalf("expected the shared cards, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			testutil.Success(t, err)
			want, notes, err := card.Load(data)
			testutil.Success(t, err)
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			stdout, stderr, code := runDemo(t, "--engine", "sim", "--card", f, "--say", "Hello", "--no-playback", "--record", rec)
			testutil.Equal(t, "exit code", code, exitOK)
			testutil.Equal(t, "stdout", stdout, echo("Hello")+"\n")
			snapshots, targets, resolved := sentCards(t, rec)
			testutil.Equal(t, "snapshots sent", len(snapshots), 1)
			// The record holds the message re-encoded: compare canonical forms.
			sent, err := card.AppendCanonical(nil, snapshots[0])
			testutil.Success(t, err)
			loaded, err := card.AppendCanonical(nil, want.Bytes())
			testutil.Success(t, err)
			if string(sent) != string(loaded) {
				t.Fatal("the card sent is not the card card.Load returned")
			}
			h := want.Hash()
			sum := sha256.Sum256(sent)
			testutil.Equal(t, "hash of what is sent", hex.EncodeToString(sum[:]), h.String())
			testutil.Equal(t, "targetHash", targets[0], h.String())
			testutil.Equal(t, "hash the engine resolved", resolved, []string{h.String()})
			if len(notes) > 0 {
				if !strings.Contains(stderr, "was repaired on load (") || !strings.Contains(stderr, notes[0].Message) {
					t.Errorf("the repairs are not shown:\n%s", stderr)
				}
			} else if strings.Contains(stderr, "repaired on load") {
				t.Errorf("a card that needed no repair is said to be repaired:\n%s", stderr)
			}
		})
	}
}

// Issue #18: a card whose name is only CJK gets an id of its own, the
// same on every run.
func TestCards_cjkName(t *testing.T) {
	t.Parallel()
	f := testutil.SharedDir(t, "cards", "movie-world-traveler.zh.v2.json")
	_, stderr, code := runDemo(t, "--engine", "sim", "--card", f, "--say", "你好", "--no-playback")
	testutil.Equal(t, "exit code", code, exitOK)
	want := "id " + characterID("电影世界穿梭者") + ")"
	if !strings.Contains(stderr, want) || strings.Contains(stderr, "id character)") {
		t.Fatalf("stderr lacks %q:\n%s", want, stderr)
	}
}
