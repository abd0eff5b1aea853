// Package cmdline words command-line mistakes the same way in the commands
// under cmd/ that use it: one line on standard error that names the flag
// as the user typed it, ending with where the usage is.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// NewFlagSet returns an empty flag set for the command called name that
// writes nothing itself: on -h the command prints its usage on standard
// output, and a mistake is one line on standard error ([Usage]).
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Parse parses args with fs, a flag set from [NewFlagSet], and returns
// the names of the flags args set. On -h or --help it calls help, if not
// nil, and returns flag.ErrHelp; any other mistake is an error worded by
// [FlagMistake].
func Parse(fs *flag.FlagSet, args []string, help func()) (set map[string]bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if help != nil {
				help()
			}
			return nil, err
		}
		return nil, errors.New(FlagMistake(err, args))
	}
	set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, nil
}

// WriteUsage writes intro, fs's flags in [PrintFlag]'s form, and outro to
// w. A flag whose usage text is empty is hidden (it is for tests).
func WriteUsage(w io.Writer, fs *flag.FlagSet, intro, outro string) {
	fmt.Fprint(w, intro)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != "" {
			PrintFlag(w, f)
		}
	})
	fmt.Fprint(w, outro)
}

// PrintFlag writes one flag's usage as every command shows it: the name
// with two dashes (one for a one-letter name) and its placeholder, then
// its text and default on the lines below, indented and wrapped at 80
// columns:
//
//	--wait DURATION
//	      how long to wait for the engine (default 2m0s)
func PrintFlag(w io.Writer, f *flag.Flag) {
	arg, text := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if len(f.Name) == 1 {
		line = "  -" + f.Name
	}
	if arg != "" {
		line += " " + arg
	}
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" { // zero values, as the flag package
		text += " (default " + f.DefValue + ")"
	}
	fmt.Fprintf(w, "%s\n%s", line, wrap(text, "        ", 80))
}

// wrap breaks text into lines of at most width bytes where its words
// allow, each starting with indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		if n > len(indent) && n+1+len(word) > width {
			b.WriteString("\n")
			n = 0
		}
		if n == 0 {
			b.WriteString(indent)
			n = len(indent)
		} else {
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	b.WriteString("\n")
	return b.String()
}

// FlagMistake words an error returned by flag.FlagSet.Parse for a user,
// naming the flag as it was typed in args ("--x" or "-x"; the flag
// package always writes "-x"):
//
//	unknown flag --colour
//	flag needs a value: --url
//	invalid value "x" for flag --games: parse error
//	invalid value "maybe" for flag --auto: parse error
//
// Any other error is returned as its text.
func FlagMistake(err error, args []string) string {
	msg := err.Error()
	for _, p := range []struct{ prefix, say string }{
		{"flag provided but not defined: -", "unknown flag "},
		{"flag needs an argument: -", "flag needs a value: "},
	} {
		if name, ok := strings.CutPrefix(msg, p.prefix); ok {
			return p.say + typed(name, args)
		}
	}
	// invalid value "x" for flag -name: cause
	// invalid boolean value "x" for -name: cause
	for _, p := range []struct{ prefix, sep string }{
		{"invalid value ", " for flag -"},
		{"invalid boolean value ", " for -"},
	} {
		rest, ok := strings.CutPrefix(msg, p.prefix)
		i := strings.LastIndex(rest, p.sep)
		if !ok || i < 0 {
			continue
		}
		name, cause, _ := strings.Cut(rest[i+len(p.sep):], ": ")
		return fmt.Sprintf("invalid value %s for flag %s: %s", rest[:i], typed(name, args), cause)
	}
	return msg
}

// typed returns the flag called name as it appears in args, with one dash
// or two; "-name" if it does not appear.
func typed(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		flag, _, _ := strings.Cut(a, "=")
		if flag == "-"+name || flag == "--"+name {
			return flag
		}
	}
	return "-" + name
}

// Usage writes a command-line mistake as one line on w, prefixed with the
// command's name and followed by where to find the usage:
//
//	cmd: unknown flag --colour; run 'cmd --help' for usage
func Usage(w io.Writer, cmd, msg string) {
	fmt.Fprintf(w, "%s: %s; run '%s --help' for usage\n", cmd, msg, cmd)
}
