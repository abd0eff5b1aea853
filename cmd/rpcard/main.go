// Command rpcard validates, hashes, diffs, patches, repairs and extracts
// Character Card V2 files, for modders and scripts.
//
//	rpcard validate [--strict] FILE...  every violation with its JSON Pointer
//	rpcard hash [--force] FILE          the card's RFC 8785 SHA-256, 64 hex
//	rpcard diff BASE TARGET             the verified RFC 6902 patch
//	rpcard apply BASE PATCH             the patched document
//	rpcard fix FILE [-o OUT]            the repaired card; changes on stderr
//	rpcard extract CARD.png             the card JSON embedded in a PNG
//
// validate, hash and diff read a card as card.Load does, as a game does:
// the repairs that keep its meaning are made, and each is said on stderr;
// validate --strict applies the engine's rules to the file as it is.
// FILE may be "-" for stdin, a JSON file or a PNG card. Flags may come
// before or after the command and the operands; after "--" everything is
// an operand. --help prints the usage on stdout. A command-line mistake is
// one line on stderr (exit status 2); every other error says what to do
// next. Exit status: 0 ok, 1 invalid input of any kind, 2 usage.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gamelink-go/gamelink/internal/cmdline"
	"github.com/gamelink-go/gamelink/rpengine/card"
)

const usage = `usage: rpcard COMMAND [flags] FILE...

commands:
  validate [--strict] FILE...
                          check the Character Card V2 rules the engine enforces;
                          prints every violation with its JSON Pointer; --strict
                          checks the file as it is, without the repairs a game
                          makes on load
  hash [--force] FILE     print the card's hash (SHA-256 of RFC 8785 JSON, 64 hex);
                          refuses invalid or not hash-safe cards unless --force,
                          which hashes any well-formed JSON document as it is
  diff BASE TARGET        print the verified RFC 6902 patch from BASE to TARGET
  apply BASE PATCH        print BASE with the RFC 6902 PATCH applied (canonical JSON)
  fix FILE [-o OUT]       repair a card (V1 and Pygmalion cards upgraded as SillyTavern
                          imports them, V3 read as V2, missing fields, lorebook
                          extensions); prints it or writes OUT, lists changes on
                          stderr; writes nothing when the card stays invalid
  extract CARD.png        print the card JSON embedded in a PNG

validate, hash and diff read a card as a game's card.Load does: the repairs
that keep its meaning (V1 and V3 cards, missing fields, lorebook extensions)
are made, each said on stderr. FILE may be "-" for stdin, a .json file or a
.png card. Flags may come before or after the command and the operands; after
-- everything is an operand.

exit status: 0 ok, 1 invalid input of any kind, 2 usage error (a bad flag or
command, or an -o file that cannot be written)
`

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// errUsage marks a command line error.
var errUsage = errors.New("usage")

// errUnwritable marks an -o file that cannot be created: exit status 2,
// as every command gives for a file a flag names (Issue #32).
var errUnwritable = errors.New("cannot be written")

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	force, strict  bool
	out            string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	fs := cmdline.NewFlagSet("rpcard")
	fs.BoolVar(&e.force, "force", false, "hash any well-formed JSON document")
	fs.BoolVar(&e.strict, "strict", false, "validate the file as it is, without the repairs made on load")
	fs.StringVar(&e.out, "o", "", "write the repaired card to this file")
	operands, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) || (err == nil && len(operands) > 0 && operands[0] == "help") {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, cmdline.FlagMistake(err, args))
	}
	if len(operands) == 0 {
		return usageError(stderr, "no command given")
	}
	err = e.dispatch(operands[0], operands[1:])
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		return usageError(stderr, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	case errors.Is(err, errUnwritable):
		fmt.Fprintf(stderr, "rpcard: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "rpcard: %v\n", err)
	return exitInvalid
}

// usageError prints a command-line mistake on one line, with where to
// find the usage, and returns the usage exit status.
func usageError(stderr io.Writer, msg string) int {
	cmdline.Usage(stderr, "rpcard", msg)
	return exitUsage
}

// parseInterspersed lets flags come before or after the operands. After
// "--" everything is an operand, so a file named "-x.json" can be given.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; endsWithTerminator(consumed) {
			return append(operands, rest...), nil
		}
		if len(rest) == 0 {
			return operands, nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// endsWithTerminator reports whether flag parsing stopped at a "--" that
// was not the value of -o.
func endsWithTerminator(consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	return n == 1 || (consumed[n-2] != "-o" && consumed[n-2] != "--o")
}

func (e *env) dispatch(cmd string, ops []string) error {
	want := map[string]int{"validate": -1, "hash": 1, "diff": 2, "apply": 2, "fix": 1, "extract": 1}
	n, ok := want[cmd]
	switch {
	case !ok:
		return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	case n < 0 && len(ops) == 0, n > 0 && len(ops) != n:
		return fmt.Errorf("%w: %s takes %s", errUsage, cmd, map[int]string{-1: "one or more files", 1: "one file", 2: "two files"}[n])
	case e.force && cmd != "hash", e.out != "" && cmd != "fix", e.strict && cmd != "validate":
		return fmt.Errorf("%w: flag not valid for %s", errUsage, cmd)
	}
	switch cmd {
	case "validate":
		return e.validate(ops)
	case "hash":
		return e.hash(ops[0])
	case "diff":
		return e.diff(ops[0], ops[1])
	case "apply":
		return e.apply(ops[0], ops[1])
	case "fix":
		return e.fix(ops[0])
	}
	return e.extract(ops[0])
}

// maxInput bounds what rpcard reads from one file or stdin: a PNG holds
// the card as base64 beside the image, so it may be well over the 8 MiB
// card limit.
const maxInput = 64 << 20

// readFile returns the bytes of the named file, stdin for "-". Its errors
// say what to do next.
func (e *env) readFile(name string) ([]byte, error) {
	r := e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; check the name and the folder", name)
		}
		if err != nil {
			return nil, fmt.Errorf("%w; check that the file can be read", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s: larger than the %d MiB rpcard reads; is it really a card?", name, maxInput>>20)
	}
	return b, nil
}

// isPNG reports whether the named file is to be read as a PNG: a .png
// name, or the PNG signature.
func isPNG(name string, b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x89PNG")) || strings.EqualFold(filepath.Ext(name), ".png")
}

// read returns the JSON in the named file: the embedded card for a PNG.
func (e *env) read(name string) ([]byte, error) {
	b, err := e.readFile(name)
	if err != nil {
		return nil, err
	}
	if isPNG(name, b) {
		if b, err = card.ExtractPNG(b); err != nil {
			return nil, fmt.Errorf("%s: %w; %s", name, err, pngHint(err))
		}
	}
	return b, nil
}

// load reads the named card as card.Load does and says on stderr what it
// repaired. A card Load refuses is its error, with what to do next.
func (e *env) load(name string) (*card.Card, error) {
	b, err := e.readFile(name)
	if err != nil {
		return nil, err
	}
	if isPNG(name, b) && !bytes.HasPrefix(b, []byte("\x89PNG")) {
		_, err := card.ExtractPNG(b) // a .png name with something else inside
		return nil, fmt.Errorf("%s: %w; %s", name, err, pngHint(err))
	}
	c, notes, err := card.Load(b)
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "%s: repaired on load: %s\n", name, n)
	}
	var pe *card.ParseError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("%s: %w; %s", name, err, parseHint)
	case err != nil && bytes.HasPrefix(b, []byte("\x89PNG")) && !errors.As(err, new(*card.ValidationError)):
		return nil, fmt.Errorf("%s: %w; %s", name, err, pngHint(err))
	}
	return c, err
}

// pngHint says what to do about a PNG that holds no readable card.
func pngHint(err error) string {
	switch {
	case errors.Is(err, card.ErrNoCard):
		return "export the card again from the tool it came from (as PNG or JSON)"
	case strings.Contains(err.Error(), "not a PNG file"):
		return "if it holds JSON, give it a .json name"
	}
	return "the file is damaged: download or export it again"
}

// parseHint says what to do about a document Parse refused.
const parseHint = "fix the JSON there in a text editor (rpcard fix cannot repair malformed JSON)"

func (e *env) validate(names []string) error {
	bad := 0
	for _, name := range names {
		var b []byte
		var c *card.Card
		var err error
		if e.strict { // the engine's rules on the file as it is
			if b, err = e.read(name); err == nil {
				if c, err = card.Parse(b); err != nil {
					err = fmt.Errorf("%s: %w; %s", name, err, parseHint)
				} else {
					err = c.Validate()
				}
			}
		} else {
			c, err = e.load(name)
		}
		var ve *card.ValidationError
		switch {
		case errors.As(err, &ve):
			for _, v := range ve.Violations {
				fmt.Fprintf(e.stdout, "%s: %s\n", name, v)
			}
			fmt.Fprintf(e.stderr, "%s: %s\n", name, repairHint(name, b, len(ve.Violations), e.strict))
			bad++
		case err != nil:
			fmt.Fprintf(e.stderr, "%v\n", err)
			bad++
		default:
			fmt.Fprintf(e.stdout, "%s: valid\n", name)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %s invalid", bad, plural(len(names), "file"))
	}
	return nil
}

// repairHint says what to do about a card that breaks n rules: as it is
// (strict), run rpcard fix when it repairs them all; else edit what no
// repair can fix.
func repairHint(name string, b []byte, n int, strict bool) string {
	if !strict {
		return "hint: edit the values named above by hand (no repair changes content), then validate again"
	}
	_, changes, err := card.Repair(b)
	var ve *card.ValidationError
	switch {
	case !errors.As(err, &ve):
		return fmt.Sprintf("hint: `rpcard fix %s -o fixed.json` repairs this card without changing its content "+
			"(a game using card.Load repairs it on load)", name)
	case len(changes) == 0 && len(ve.Violations) == n:
		return "hint: edit the values named above by hand (rpcard fix never changes content), then validate again"
	}
	var where []string
	for _, v := range ve.Violations {
		where = append(where, pointerOrRoot(v.Pointer))
	}
	return fmt.Sprintf("hint: edit %s by hand (rpcard fix never changes content); then `rpcard fix %s -o fixed.json` repairs the rest",
		strings.Join(where, ", "), name)
}

// plural formats n and a noun that takes an s.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

func (e *env) hash(name string) error {
	if e.force {
		b, err := e.read(name)
		if err != nil {
			return err
		}
		canon, err := card.AppendCanonical(nil, b)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sum := sha256.Sum256(canon)
		fmt.Fprintln(e.stdout, hex.EncodeToString(sum[:]))
		return nil
	}
	c, err := e.load(name)
	var ve *card.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s: %w; `rpcard validate %s` says what to change, --force hashes the document as it is", name, err, name)
	}
	if err != nil {
		return err
	}
	if err := c.CheckNumbers(); err != nil {
		return fmt.Errorf("%s: %w (--force hashes it anyway)", name, err)
	}
	d := c.Hash()
	fmt.Fprintln(e.stdout, d)
	return nil
}

func (e *env) diff(baseName, targetName string) error {
	base, err := e.load(baseName)
	if err != nil {
		return err
	}
	target, err := e.load(targetName)
	if err != nil {
		return err
	}
	p, err := card.Diff(base, target)
	if err != nil {
		return err
	}
	if err := target.CheckNumbers(); err != nil {
		fmt.Fprintf(e.stderr, "rpcard: warning: %s: %v; the patch holds its RFC 8785 form\n", targetName, err)
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", p)
	return err
}

func (e *env) apply(baseName, patchName string) error {
	base, err := e.read(baseName)
	if err != nil {
		return err
	}
	patch, err := e.read(patchName)
	if err != nil {
		return err
	}
	out, err := card.ApplyPatch(base, patch)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", out)
	return err
}

func (e *env) fix(name string) error {
	b, err := e.read(name)
	if err != nil {
		return err
	}
	c, changes, err := card.Repair(b)
	var ve *card.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w; %s", name, err, parseHint)
	}
	for _, ch := range changes {
		fmt.Fprintf(e.stderr, "%s: fixed %s: %s\n", name, pointerOrRoot(ch.Pointer), ch.Message)
	}
	if ve != nil {
		for _, v := range ve.Violations {
			fmt.Fprintf(e.stderr, "%s: still invalid %s: %s\n", name, pointerOrRoot(v.Pointer), v.Message)
		}
		return fmt.Errorf("%s: %s that rpcard fix cannot repair without changing content; "+
			"edit those values by hand, then run rpcard fix again (nothing was written)",
			name, plural(len(ve.Violations), "violation"))
	}
	if len(changes) == 0 {
		fmt.Fprintf(e.stderr, "%s: already valid; nothing to repair\n", name)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	if e.out == "" {
		_, err = e.stdout.Write(out.Bytes())
		return err
	}
	return writeFile(e.out, out.Bytes())
}

// writeFile replaces name with data in one step: a temporary file in the
// same folder, renamed over name once complete, so a failure never leaves
// a partial or stale card behind.
func writeFile(name string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("-o %s %w: %w; check that the folder exists and is writable", name, errUnwritable, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("-o %s: %w (nothing was written)", name, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

func (e *env) extract(name string) error {
	b, err := e.readFile(name)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG")) {
		return fmt.Errorf("%s: not a PNG file; extract reads the card inside a PNG (a JSON file already is its card)", name)
	}
	if b, err = card.ExtractPNG(b); err != nil {
		return fmt.Errorf("%s: %w; %s", name, err, pngHint(err))
	}
	if !json.Valid(b) {
		return fmt.Errorf("%s: the embedded card is not valid JSON", name)
	}
	_, err = e.stdout.Write(b)
	if err == nil && (len(b) == 0 || b[len(b)-1] != '\n') {
		_, err = e.stdout.Write([]byte{'\n'})
	}
	return err
}
