package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gowebpki/jcs"
)

var binary_ string

// TestMain builds the command once; the tests run the binary.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rpcard-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary_ = filepath.Join(dir, "rpcard")
	if out, err := exec.Command("go", "build", "-o", binary_, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building rpcard: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const cards = "../../testdata/cards/"

type result struct {
	code           int
	stdout, stderr string
}

func rpcard(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary_, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// loadedHash is the hash of the card in file as card.Load reads it.
func loadedHash(t *testing.T, file string) string {
	b, err := os.ReadFile(file)
	testutil.Success(t, err)
	c, _, err := card.Load(b)
	testutil.Success(t, err)
	return c.Hash().String()
}

func oracleHash(t *testing.T, doc []byte) string {
	c, err := jcs.Transform(doc)
	testutil.Success(t, err)
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}

func TestRpcard(t *testing.T) {
	t.Parallel()
	full, err := os.ReadFile(cards + "full.json")
	testutil.Success(t, err)
	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		stdout   string // exact, unless empty
		inStdout string
		inStderr string
	}{
		{name: "help", args: []string{"--help"}, code: 0, inStdout: "exit status"},
		{name: "help after command", args: []string{"hash", "-h"}, code: 0, inStdout: "rpcard COMMAND"},
		{name: "help command", args: []string{"help"}, code: 0, inStdout: "rpcard COMMAND"},
		{name: "no arguments", code: 2, inStderr: "rpcard: no command given; run 'rpcard --help' for usage\n"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, inStderr: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"hash", "--nope", cards + "full.json"}, code: 2, inStderr: "rpcard: unknown flag --nope; run 'rpcard --help' for usage\n"},
		{name: "unknown flag first", args: []string{"-x", "hash", cards + "full.json"}, code: 2, inStderr: "rpcard: unknown flag -x;"},
		// A bad value is worded as in the other commands (internal/cmdline),
		// naming the flag as typed.
		{name: "bad boolean value", args: []string{"hash", "--force=maybe", "-"}, code: 2, inStderr: `rpcard: invalid value "maybe" for flag --force: parse error;`},
		{name: "flag before the command", args: []string{"--force", "hash", "-"}, stdin: `[1]`, code: 0, stdout: oracleHash(t, []byte(`[1]`)) + "\n"},
		{name: "missing operand", args: []string{"diff", cards + "full.json"}, code: 2, inStderr: "two files"},
		{name: "flag of another command", args: []string{"validate", "--force", cards + "full.json"}, code: 2, inStderr: "not valid for validate"},
		{name: "validate ok", args: []string{"validate", cards + "full.json", cards + "minimal.json"}, code: 0, inStdout: "full.json: valid"},
		{name: "validate violations", args: []string{"validate", cards + "invalid-content.json"}, code: 1, inStdout: "invalid-content.json: /data/character_book/entries/0/position: must be"},
		{name: "validate duplicate key", args: []string{"validate", cards + "malformed-duplicate-key.json"}, code: 1, inStderr: `duplicate key "name" at "/data/name"`},
		{name: "validate unparsable", args: []string{"validate", cards + "malformed-truncated.json"}, code: 1, inStderr: "unexpected end of input"}, // Issue #32
		// Issue #32: validate, hash and diff read a card as card.Load does,
		// and say what they repaired; --strict keeps the engine's rules.
		{name: "validate repairs as Load", args: []string{"validate", cards + "broken-book-extensions.json"}, code: 0,
			stdout: cards + "broken-book-extensions.json: valid\n", inStderr: "broken-book-extensions.json: repaired on load: /data/character_book/extensions: added missing required field"},
		{name: "validate --strict", args: []string{"validate", "--strict", cards + "broken-book-extensions.json"}, code: 1,
			inStdout: "/data/character_book/extensions: is required", inStderr: "rpcard fix " + cards + "broken-book-extensions.json -o fixed.json` repairs this card"},
		{name: "strict for another command", args: []string{"hash", "--strict", cards + "full.json"}, code: 2, inStderr: "not valid for hash"},
		{name: "hash repairs as Load", args: []string{"hash", cards + "broken-v3.json"}, code: 0, stdout: loadedHash(t, cards+"broken-v3.json") + "\n",
			inStderr: `repaired on load: /spec: read a V3 card as V2`},
		{name: "validate missing file", args: []string{"validate", "nope.json"}, code: 1, inStderr: "nope.json"},
		{name: "hash", args: []string{"hash", cards + "full.json"}, code: 0, stdout: oracleHash(t, full) + "\n"},
		{name: "hash stdin", stdin: string(full), args: []string{"hash", "-"}, code: 0, stdout: oracleHash(t, full) + "\n"},
		{name: "hash invalid card", args: []string{"hash", cards + "invalid-content.json"}, code: 1, inStderr: "--force"},
		{name: "hash a V1 card", args: []string{"hash", cards + "v1.json"}, code: 0, stdout: loadedHash(t, cards+"v1.json") + "\n", inStderr: "(root): upgraded a V1 card"},
		{name: "hash not hash-safe", stdin: unsafeCard, args: []string{"hash", "-"}, code: 1, inStderr: `number 0.5 at "/data/extensions/w"`},
		{name: "hash --force after operand", stdin: unsafeCard, args: []string{"hash", "-", "--force"}, code: 0, stdout: oracleHash(t, []byte(unsafeCard)) + "\n"},
		{name: "hash --force any document", stdin: `[3, {"b":1,"a":2}]`, args: []string{"hash", "--force", "-"}, code: 0, stdout: oracleHash(t, []byte(`[3,{"a":2,"b":1}]`)) + "\n"},
		{name: "hash --force malformed", stdin: `[1,]`, args: []string{"hash", "--force", "-"}, code: 1, inStderr: "parse"},
		{name: "diff to a card that is not hash-safe", stdin: unsafeCard, args: []string{"diff", cards + "minimal.json", "-"}, code: 0, inStdout: `"path":"/data/extensions/w","value":0.5`, inStderr: `warning: -: card: not hash-safe: number 0.5 at "/data/extensions/w"`},
		{name: "apply", stdin: `[{"op":"replace","path":"/data/name","value":"Bo"}]`, args: []string{"apply", cards + "minimal.json", "-"}, code: 0, inStdout: `"name":"Bo"`},
		{name: "apply failing patch", stdin: `[{"op":"remove","path":"/data/nope"}]`, args: []string{"apply", cards + "minimal.json", "-"}, code: 1, inStderr: `patch op 0 (remove "/data/nope")`},
		{name: "apply malformed patch", stdin: `{"op":"add"}`, args: []string{"apply", cards + "minimal.json", "-"}, code: 1, inStderr: "must be a JSON array"},
		{name: "fix invalid content", args: []string{"fix", cards + "invalid-content.json"}, code: 1, inStderr: "still invalid /data/name"},
		{name: "fix one violation", stdin: `{"name":"T","description":7}`, args: []string{"fix", "-"}, code: 1,
			inStderr: "-: 1 violation that rpcard fix cannot repair without changing content; edit those values by hand"},
		{name: "fix malformed", args: []string{"fix", cards + "malformed-duplicate-key.json"}, code: 1, inStderr: "duplicate key"},
		{name: "extract from json", args: []string{"extract", cards + "minimal.json"}, code: 1, inStderr: "not a PNG file; extract reads the card inside a PNG"}, // Issue #32
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := rpcard(t, tt.stdin, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.stdout != "" {
				testutil.Equal(t, "stdout", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stdout, tt.inStdout) {
				t.Fatalf("stdout %q does not contain %q", r.stdout, tt.inStdout)
			}
			if !strings.Contains(r.stderr, tt.inStderr) {
				t.Fatalf("stderr %q does not contain %q", r.stderr, tt.inStderr)
			}
			switch r.code { // Issue #18: one convention for every command
			case 0:
				if strings.Contains(tt.name, "help") && r.stderr != "" {
					t.Fatalf("help wrote on stderr: %q", r.stderr)
				}
			case 2:
				if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "; run 'rpcard --help' for usage\n") {
					t.Fatalf("a usage mistake is one line on stderr naming --help; stdout %q stderr %q", r.stdout, r.stderr)
				}
			}
		})
	}
}

// Issue #18: rpcard fix maps V1 and Pygmalion/gradio cards the way
// SillyTavern imports them.
func TestRpcard_fixLegacy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want, note string }{
		{"pygmalion", `{"char_name":"Ada","char_persona":"An engineer.","char_greeting":"Hello!","world_scenario":"A workshop.","example_dialogue":"<START>"}`,
			`"data":{"name":"Ada","description":"An engineer.","personality":"","scenario":"A workshop.","first_mes":"Hello!","mes_example":"<START>",`,
			"read a Pygmalion/gradio card"},
		{"v1 with string tags and creatorcomment", `{"name":"Tom","description":"d","personality":"p","scenario":"s","first_mes":"f","mes_example":"","creatorcomment":"For the harbour mod.","tags":"sea, old"}`,
			`"creator_notes":"For the harbour mod.","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"tags":["sea","old"],`,
			"split the top-level string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out.json")
			r := rpcard(t, tc.in, "fix", "-", "-o", out)
			testutil.Equal(t, "exit", r.code, 0)
			if !strings.Contains(r.stderr, tc.note) {
				t.Fatalf("stderr %q lacks %q", r.stderr, tc.note)
			}
			b, err := os.ReadFile(out)
			testutil.Success(t, err)
			var compact bytes.Buffer
			testutil.Success(t, json.Compact(&compact, b))
			if !strings.Contains(compact.String(), tc.want) {
				t.Fatalf("fixed card %s lacks %s", compact.String(), tc.want)
			}
			testutil.Equal(t, "the fixed card validates", rpcard(t, "", "validate", out).code, 0)
		})
	}
}

// Issue #18: a fix that fails writes nothing; errors rpcard fix cannot
// repair do not suggest it; counts agree with their nouns.
func TestRpcard_fixFailsCleanly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	r := rpcard(t, "", "fix", cards+"invalid-content.json", "-o", out)
	testutil.Equal(t, "exit", r.code, 1)
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed fix left %s behind (%v)", out, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a failed fix left files: %v", entries)
	}

	card, err := os.ReadFile(cards + "minimal.json")
	testutil.Success(t, err)
	png := pngWith(card)
	png[len(png)-15] ^= 0xff // inside the tEXt chunk: its CRC no longer matches
	badPNG := filepath.Join(dir, "bad.png")
	testutil.Success(t, os.WriteFile(badPNG, png, 0o644))
	for _, args := range [][]string{
		{"validate", filepath.Join(dir, "missing.json")},
		{"fix", filepath.Join(dir, "missing.json")},
		{"validate", badPNG},
		{"fix", badPNG},
		{"validate", cards + "malformed-truncated.json"},
		{"fix", cards + "malformed-truncated.json"},
		{"validate", cards + "invalid-content.json"},
		{"hash", cards + "invalid-content.json"},
	} {
		r := rpcard(t, "", args...)
		testutil.Equal(t, strings.Join(args, " "), r.code, 1)
		if strings.Contains(r.stderr, "rpcard fix ") && !strings.Contains(r.stderr, "rpcard fix never") && !strings.Contains(r.stderr, "rpcard fix cannot") {
			t.Errorf("%v suggests rpcard fix for what it cannot fix: %q", args, r.stderr)
		}
		if !strings.Contains(r.stderr, "check the name") && !strings.Contains(r.stderr, "again") && !strings.Contains(r.stderr, "by hand") &&
			!strings.Contains(r.stderr, "text editor") && !strings.Contains(r.stderr, "rpcard validate") {
			t.Errorf("%v does not say what to do next: %q", args, r.stderr)
		}
		if regexp.MustCompile(`\b1 (violations|files)`).MatchString(r.stderr) {
			t.Errorf("%v: %q", args, r.stderr)
		}
	}
	// A card rpcard fix does repair gets the suggestion (checked as it is).
	r = rpcard(t, "", "validate", "--strict", cards+"v1.json")
	if !strings.Contains(r.stderr, "rpcard fix "+cards+"v1.json -o fixed.json` repairs this card") || !strings.Contains(r.stderr, "1 of 1 file invalid") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

const unsafeCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"N","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"tags":[],"creator":"","character_version":"","extensions":{"w":0.5}}}`

// TestRpcard_diffApply: the printed patch, applied by rpcard, gives the
// target's hash.
func TestRpcard_diffApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	r := rpcard(t, `[{"op":"replace","path":"/data/character_book/entries/3/content","value":"new"},{"op":"remove","path":"/data/tags"},{"op":"add","path":"/data/tags","value":["x"]}]`, "apply", cards+"lorebook-200.json", "-")
	testutil.Equal(t, "apply exit", r.code, 0)
	testutil.Success(t, os.WriteFile(target, []byte(r.stdout), 0o644))
	d := rpcard(t, "", "diff", cards+"lorebook-200.json", target)
	testutil.Equal(t, "diff exit", d.code, 0)
	if !strings.Contains(d.stdout, `"path":"/data/character_book/entries/3/content"`) {
		t.Fatalf("patch %s", d.stdout)
	}
	a := rpcard(t, d.stdout, "apply", cards+"lorebook-200.json", "-")
	testutil.Equal(t, "re-apply exit", a.code, 0)
	testutil.Equal(t, "round trip", a.stdout, r.stdout)
}

func TestRpcard_fixWritesFile(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"fix", cards + "broken-v3.json", "-o", ""}, {"fix", "-o", "", cards + "broken-v3.json"}} {
		out := filepath.Join(t.TempDir(), "fixed.json")
		for i := range args {
			if args[i] == "" {
				args[i] = out
			}
		}
		r := rpcard(t, "", args...)
		testutil.Equal(t, "exit", r.code, 0)
		testutil.Equal(t, "stdout", r.stdout, "")
		if !strings.Contains(r.stderr, `fixed /spec: read a V3 card as V2`) {
			t.Fatalf("changes not listed: %q", r.stderr)
		}
		v := rpcard(t, "", "validate", out)
		testutil.Equal(t, "fixed card validates", v.code, 0)
	}
}

func TestRpcard_png(t *testing.T) {
	t.Parallel()
	card, err := os.ReadFile(cards + "full.json")
	testutil.Success(t, err)
	png := pngWith(card)
	file := filepath.Join(t.TempDir(), "card.png")
	testutil.Success(t, os.WriteFile(file, png, 0o644))
	r := rpcard(t, "", "extract", file)
	testutil.Equal(t, "exit", r.code, 0)
	testutil.Equal(t, "card", r.stdout, string(card))
	h := rpcard(t, "", "hash", file)
	testutil.Equal(t, "hash of a PNG card", h.stdout, oracleHash(t, card)+"\n")
	bad := filepath.Join(t.TempDir(), "bad.png")
	testutil.Success(t, os.WriteFile(bad, png[:len(png)-3], 0o644))
	r = rpcard(t, "", "extract", bad)
	testutil.Equal(t, "malformed png exit", r.code, 1)
	if !strings.Contains(r.stderr, "malformed PNG") {
		t.Fatalf("stderr %q", r.stderr)
	}
	v := rpcard(t, "", "validate", file)
	testutil.Equal(t, "validate a PNG", v.stdout, file+": valid\n")
	// Issue #32: a PNG with a ccv3 chunk (a V3 card) is read as Load reads
	// it, and --strict checks the chunk's JSON as it is.
	v3 := bytes.Replace(card, []byte(`"chara_card_v2"`), []byte(`"chara_card_v3"`), 1)
	ccv3 := filepath.Join(t.TempDir(), "ccv3.png")
	testutil.Success(t, os.WriteFile(ccv3, pngWithChunks(card, v3), 0o644))
	v = rpcard(t, "", "validate", ccv3)
	testutil.Equal(t, "validate a ccv3 PNG", v.stdout, ccv3+": valid\n")
	if !strings.Contains(v.stderr, "repaired on load: /spec: read a V3 card as V2") {
		t.Errorf("stderr %q", v.stderr)
	}
	v = rpcard(t, "", "validate", "--strict", ccv3)
	if v.code != 1 || !strings.Contains(v.stdout, `/spec: must be "chara_card_v2"`) {
		t.Errorf("strict: %d %q", v.code, v.stdout)
	}
	v1, err := os.ReadFile(cards + "v1.json")
	testutil.Success(t, err)
	v1png := filepath.Join(t.TempDir(), "v1.png")
	testutil.Success(t, os.WriteFile(v1png, pngWith(v1), 0o644))
	f := rpcard(t, "", "fix", v1png)
	testutil.Equal(t, "fix a PNG: exit", f.code, 0)
	if !strings.Contains(f.stdout, `"spec": "chara_card_v2"`) || !strings.Contains(f.stderr, "upgraded a V1 card") {
		t.Fatalf("fix of a PNG: stdout %q stderr %q", f.stdout, f.stderr)
	}
	// A .png name with JSON inside is refused as a PNG, not read as JSON.
	fake := filepath.Join(t.TempDir(), "fake.png")
	testutil.Success(t, os.WriteFile(fake, card, 0o644))
	r = rpcard(t, "", "validate", fake)
	testutil.Equal(t, "JSON named .png: exit", r.code, 1)
	if !strings.Contains(r.stderr, "not a PNG file") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

// TestRpcard_operands: "--" ends the flags, so a file whose name starts
// with "-" can be named; stdin is bounded with a clear error.
func TestRpcard_operands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	min, err := os.ReadFile(cards + "minimal.json")
	testutil.Success(t, err)
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "-m.json"), min, 0o644))
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "-n.json"), min, 0o644))
	cmd := exec.Command(binary_, "validate", "--", "-m.json", "-n.json")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	testutil.Success(t, err)
	testutil.Equal(t, "output", string(out), "-m.json: valid\n-n.json: valid\n")

	r := rpcard(t, strings.Repeat(" ", 64<<20+1), "hash", "--force", "-")
	testutil.Equal(t, "oversized stdin: exit", r.code, 1)
	if !strings.Contains(r.stderr, "larger than the 64 MiB") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

// pngWith builds a minimal PNG (signature, IHDR, tEXt chara, IEND); the
// extractor reads chunks, not pixels.
func pngWith(card []byte) []byte { return pngWithChunks(card, nil) }

// pngWithChunks is pngWith with a ccv3 chunk too, when ccv3 is not nil.
func pngWithChunks(card, ccv3 []byte) []byte {
	chunk := func(typ string, body []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		b = append(b, typ...)
		b = append(b, body...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
	}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0})...)
	out = append(out, chunk("tEXt", append([]byte("chara\x00"), base64.StdEncoding.EncodeToString(card)...))...)
	if ccv3 != nil {
		out = append(out, chunk("tEXt", append([]byte("ccv3\x00"), base64.StdEncoding.EncodeToString(ccv3)...))...)
	}
	return append(out, chunk("IEND", nil)...)
}
