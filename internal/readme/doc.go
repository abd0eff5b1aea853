// Package readme holds the tests that keep the repository's README true:
// every Go snippet in README.md and docs/*.md is compiled and run, in a
// scratch module that uses this repository, with only the declarations it
// leaves out supplied around it, and every relative link of those pages
// points at a file and heading that exist. It has no code of its own. The
// program scripts/check-module-recipe runs from a scratch module, to check
// the README's recipes for using the module, is examples/mygame.
package readme
