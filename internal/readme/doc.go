// Package readme holds the test that keeps the repository's README true:
// every Go snippet in README.md is compiled and run, in a scratch module
// that uses this repository, with only the declarations it leaves out
// supplied around it. It has no code of its own. The program
// scripts/check-module-recipe runs from a scratch module, to check the
// README's recipes for using the module, is examples/mygame.
package readme
