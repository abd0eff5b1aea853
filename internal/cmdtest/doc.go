// Package cmdtest holds the test that keeps the five commands under cmd/
// to one command-line convention: --help and -h print the usage on
// standard output and exit 0; an unknown flag exits 2 with one line on
// standard error that names the flag as it was typed and says
// "run '<cmd> --help' for usage"; no line a user reads carries a
// timestamp; the end of standard input ends an interactive command with
// exit status 0. It has no code of its own.
package cmdtest
