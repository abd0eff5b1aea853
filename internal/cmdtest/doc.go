// Package cmdtest holds the test that keeps the five commands under cmd/
// to one command-line convention (examples/ebiten-tavern, its own module,
// checks the same in its own tests):
//
//   - --help and -h print the usage on standard output and exit 0; the
//     usage shows a flag as --name (a one-letter flag as -x) and says
//     "2 usage error" among the exit statuses;
//   - an unknown flag exits 2 with one line on standard error that names
//     the flag as it was typed and says "run '<cmd> --help' for usage";
//   - a file a flag names that cannot be written (--record, rpcard's -o)
//     or read as what the flag takes (--wav takes a WAV file only), or an
//     --inspect address that is not loopback, exits 2, with a line naming
//     the flag;
//   - no line a user reads carries a timestamp;
//   - the end of standard input ends an interactive command with exit
//     status 0.
//
// It has no code of its own.
package cmdtest
