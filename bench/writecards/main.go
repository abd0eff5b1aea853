// Command writecards writes the benchmark cards (bench.Cards) and their
// canonical hashes into a directory, for the Node.js reference run by
// bench/run: NAME.json and NAME.sha256 for each card.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gamelink-go/gamelink/bench"
	"github.com/gamelink-go/gamelink/rpengine/card"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: writecards DIR")
	}
	dir := os.Args[1]
	for _, c := range bench.Cards() {
		parsed, err := card.Parse(c.JSON)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		h := parsed.Hash()
		if err := os.WriteFile(filepath.Join(dir, c.Name+".json"), c.JSON, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".sha256"), []byte(h.String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
