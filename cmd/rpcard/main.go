// Command rpcard validates, hashes, diffs, patches, repairs and extracts
// Character Card V2 files, for modders and scripts.
//
//	rpcard validate FILE...        every violation with its JSON Pointer
//	rpcard hash [--force] FILE     the card's RFC 8785 SHA-256, 64 hex
//	rpcard diff BASE TARGET        the verified RFC 6902 patch
//	rpcard apply BASE PATCH        the patched document
//	rpcard fix FILE [-o OUT]       the repaired card; changes on stderr
//	rpcard extract CARD.png        the card JSON embedded in a PNG
//
// FILE may be "-" for stdin, a JSON file or a PNG card. Flags may come
// before or after the operands; after "--" everything is an operand.
// Exit status: 0 ok, 1 invalid input of any kind, 2 usage.
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
	"os"
	"path/filepath"
	"strings"

	"github.com/gamelink-go/gamelink/rpengine/card"
)

const usage = `usage: rpcard COMMAND [flags] FILE...

commands:
  validate FILE...        check the Character Card V2 rules the engine enforces;
                          prints every violation with its JSON Pointer
  hash [--force] FILE     print the card's hash (SHA-256 of RFC 8785 JSON, 64 hex);
                          refuses invalid or not hash-safe cards unless --force,
                          which hashes any well-formed JSON document
  diff BASE TARGET        print the verified RFC 6902 patch from BASE to TARGET
  apply BASE PATCH        print BASE with the RFC 6902 PATCH applied (canonical JSON)
  fix FILE [-o OUT]       repair a card (V1/V3 to V2, missing fields, lorebook
                          extensions); prints it or writes OUT, lists changes on stderr
  extract CARD.png        print the card JSON embedded in a PNG

FILE may be "-" for stdin, a .json file or a .png card. Flags may come before
or after the operands; after -- everything is an operand.

exit status: 0 ok, 1 invalid input of any kind, 2 usage
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

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	force          bool
	out            string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd := args[0]
	if cmd == "-h" || cmd == "--help" || cmd == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("rpcard "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&e.force, "force", false, "hash any well-formed JSON document")
	fs.StringVar(&e.out, "o", "", "write the repaired card to this file")
	operands, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpcard: %v\n\n%s", err, usage)
		return exitUsage
	}
	err = e.dispatch(cmd, operands)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "rpcard: %v\n\n%s", err, usage)
		return exitUsage
	}
	fmt.Fprintf(stderr, "rpcard: %v\n", err)
	return exitInvalid
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
	case e.force && cmd != "hash", e.out != "" && cmd != "fix":
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

// read returns the JSON in the named file: stdin for "-", the embedded
// card for a PNG (a file named .png, or any input with the PNG signature).
func (e *env) read(name string) ([]byte, error) {
	r := e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s: larger than the %d MiB rpcard reads", name, maxInput>>20)
	}
	if bytes.HasPrefix(b, []byte("\x89PNG")) || strings.EqualFold(filepath.Ext(name), ".png") {
		if b, err = card.ExtractPNG(b); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return b, nil
}

func (e *env) parse(name string) (*card.Card, error) {
	b, err := e.read(name)
	if err != nil {
		return nil, err
	}
	c, err := card.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func (e *env) validate(names []string) error {
	bad := 0
	for _, name := range names {
		c, err := e.parse(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "%v\n", err)
			bad++
			continue
		}
		var ve *card.ValidationError
		if err := c.Validate(); errors.As(err, &ve) {
			for _, v := range ve.Violations {
				fmt.Fprintf(e.stdout, "%s: %s: %s\n", name, pointerOrRoot(v.Pointer), v.Message)
			}
			bad++
			continue
		}
		fmt.Fprintf(e.stdout, "%s: valid\n", name)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d files invalid (rpcard fix repairs V1/V3 cards and incomplete exports)", bad, len(names))
	}
	return nil
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
	c, err := e.parse(name)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s: %w (--force hashes it anyway)", name, err)
	}
	if err := c.HashSafe(); err != nil {
		return fmt.Errorf("%s: %w (--force hashes it anyway)", name, err)
	}
	d, _ := c.Hash()
	fmt.Fprintln(e.stdout, d)
	return nil
}

func (e *env) diff(baseName, targetName string) error {
	base, err := e.parse(baseName)
	if err != nil {
		return err
	}
	target, err := e.parse(targetName)
	if err != nil {
		return err
	}
	p, err := card.Diff(base, target)
	if err != nil {
		return err
	}
	if err := target.HashSafe(); err != nil {
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
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, ch := range changes {
		fmt.Fprintf(e.stderr, "%s: fixed %s: %s\n", name, pointerOrRoot(ch.Pointer), ch.Message)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	if e.out != "" {
		err = os.WriteFile(e.out, out.Bytes(), 0o644)
	} else {
		_, err = e.stdout.Write(out.Bytes())
	}
	if err != nil {
		return err
	}
	if ve != nil {
		for _, v := range ve.Violations {
			fmt.Fprintf(e.stderr, "%s: still invalid %s: %s\n", name, pointerOrRoot(v.Pointer), v.Message)
		}
		return fmt.Errorf("%s: %d violations repair may not fix (content is never changed)", name, len(ve.Violations))
	}
	return nil
}

func (e *env) extract(name string) error {
	b, err := e.read(name)
	if err != nil {
		return err
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
