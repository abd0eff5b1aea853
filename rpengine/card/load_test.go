package card

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// sentHash is the hash the engine computes from what is sent: SHA-256 of
// the canonical form of the card's bytes.
func sentHash(t *testing.T, c *Card) Digest {
	t.Helper()
	canon, err := AppendCanonical(nil, c.Bytes())
	testutil.Success(t, err)
	return sha256.Sum256(canon)
}

// asCCV3 rewrites a V2 card as SillyTavern writes its ccv3 chunk: the
// same document with spec "chara_card_v3" and spec_version "3.0".
func asCCV3(t *testing.T, v2 []byte) []byte {
	t.Helper()
	root := decodeTree(v2)
	root.set("spec", strNode("chara_card_v3"))
	root.set("spec_version", strNode("3.0"))
	return root.append(nil)
}

// Issue #18: every real card in the shared folder loads as exported, as a
// JSON file and inside a PNG as SillyTavern writes it (chara and ccv3
// chunks), and the card returned is valid and hashed as sent.
func TestLoad_sharedCards(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t, "cards"), "*.json"))
	if len(files) < 10 {
		t.Fatalf("expected the shared cards, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile(f)
			testutil.Success(t, err)
			inputs := map[string][]byte{"json": in}
			v1 := strings.Contains(f, ".v1.")
			if v1 { // a V1 editor writes only the chara chunk
				inputs["png"] = makePNG(t, nil, [][]byte{textChunk("chara", in)})
			} else {
				inputs["png"] = makePNG(t, nil, [][]byte{textChunk("chara", in), textChunk("ccv3", asCCV3(t, in))})
			}
			for kind, data := range inputs {
				c, notes, err := Load(data)
				if err != nil {
					t.Fatalf("%s: %v (notes %v)", kind, err, notes)
				}
				testutil.Success(t, c.Validate())
				d := c.Hash()
				testutil.Equal(t, kind+" hash of what is sent", d, sentHash(t, c))
				if kind == "json" && len(notes) == 0 {
					testutil.Equal(t, "unchanged card", c.Bytes(), in)
				}
				if kind == "png" && !v1 && (len(notes) == 0 || notes[0].Pointer != "/spec") {
					t.Errorf("png: the ccv3 chunk was not the one read: notes %v", notes)
				}
				t.Logf("%s: %v", kind, notes)
			}
		})
	}
}

// Issue #18: only what the engine would still refuse is an error, and the
// card is then nil.
func TestLoad_refused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []byte
		want any
	}{
		{"blank name", readCard(t, "invalid-content.json"), new(*ValidationError)},
		{"malformed JSON", readCard(t, "malformed-truncated.json"), new(*ParseError)},
		{"no card in the PNG", makePNG(t, nil, nil), &ErrNoCard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _, err := Load(tc.in)
			if c != nil {
				t.Fatal("a refused card was returned")
			}
			if target, ok := tc.want.(*error); ok {
				testutil.ErrorIs(t, err, *target)
				return
			}
			testutil.ErrorAs(t, err, tc.want)
		})
	}
	// A damaged PNG says so.
	png := makePNG(t, nil, [][]byte{textChunk("chara", readCard(t, "minimal.json"))})
	png[len(png)-20] ^= 0xff
	_, _, err := Load(png)
	if err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Fatalf("damaged PNG: %v", err)
	}
}

// Issue #18: V1 and Pygmalion/gradio cards are read the way SillyTavern
// imports them.
func TestRepair_legacyFormats(t *testing.T) {
	t.Parallel()
	type data struct {
		Name, Description, Personality, Scenario string
		FirstMes                                 string   `json:"first_mes"`
		MesExample                               string   `json:"mes_example"`
		CreatorNotes                             string   `json:"creator_notes"`
		Creator                                  string   `json:"creator"`
		Tags                                     []string `json:"tags"`
	}
	for _, tc := range []struct {
		name, in string
		want     data
		notes    []string // pointers
	}{
		{name: "V1 with creatorcomment and string tags",
			in:    `{"name":"Tom","description":"A fisherman.","first_mes":"Hi.","creatorcomment":"For the harbour mod.","creator":"ann","tags":" sea, ,old ,"}`,
			want:  data{Name: "Tom", Description: "A fisherman.", FirstMes: "Hi.", CreatorNotes: "For the harbour mod.", Creator: "ann", Tags: []string{"sea", "old"}},
			notes: []string{"", "/data/creator_notes", "/data/tags"}},
		{name: "V1 creator_notes placeholder",
			in:    `{"name":"Tom","creator_notes":"Creator's notes go here.","tags":["a"]}`,
			want:  data{Name: "Tom", Tags: []string{"a"}},
			notes: []string{"", "/data/creator_notes"}},
		{name: "creatorcomment wins over creator_notes",
			in:    `{"name":"Tom","creatorcomment":"real","creator_notes":"other"}`,
			want:  data{Name: "Tom", CreatorNotes: "real", Tags: []string{}},
			notes: []string{"", "/data/creator_notes"}},
		{name: "Pygmalion/gradio",
			in: `{"char_name":"Ada","char_persona":"An engineer.","char_greeting":"Hello!","world_scenario":"A workshop.","example_dialogue":"<START>","personality":"ignored"}`,
			want: data{Name: "Ada", Description: "An engineer.", FirstMes: "Hello!", Scenario: "A workshop.", MesExample: "<START>",
				Tags: []string{}},
			notes: []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, changes, err := Repair([]byte(tc.in))
			testutil.Success(t, err)
			var got struct{ Data data }
			testutil.Success(t, json.Unmarshal(c.Bytes(), &got))
			testutil.Equal(t, "data", got.Data, tc.want)
			var ptrs []string
			for _, ch := range changes {
				ptrs = append(ptrs, ch.Pointer)
			}
			testutil.Equal(t, "notes", ptrs, tc.notes)
			// The original fields stay at the top level.
			var top, orig map[string]json.RawMessage
			testutil.Success(t, json.Unmarshal(c.Bytes(), &top))
			testutil.Success(t, json.Unmarshal([]byte(tc.in), &orig))
			for k, v := range orig {
				if string(top[k]) != string(v) {
					t.Errorf("top-level %s changed: %s -> %s", k, v, top[k])
				}
			}
		})
	}
	// A card with neither name nor char_name stays refused: no name.
	_, _, err := Repair([]byte(`{"description":"who?"}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "/data/name: must not be blank") {
		t.Fatalf("nameless V1 card: %v", err)
	}
}
