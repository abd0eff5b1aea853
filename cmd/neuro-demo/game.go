package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/neuro"
)

// board cells are indexed 0..8; players see 1..9.
type board [9]byte

var lines = [8][3]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}}

func (b *board) winner() byte {
	for _, l := range lines {
		if b[l[0]] != 0 && b[l[0]] == b[l[1]] && b[l[1]] == b[l[2]] {
			return b[l[0]]
		}
	}
	return 0
}

func (b *board) free() []int {
	var f []int
	for i, v := range b {
		if v == 0 {
			f = append(f, i+1)
		}
	}
	return f
}

// markdown renders the board for Neuro (no top-level headings).
func (b *board) markdown() string {
	var sb strings.Builder
	for r := 0; r < 3; r++ {
		for col := 0; col < 3; col++ {
			i := r*3 + col
			switch b[i] {
			case 0:
				sb.WriteString(strconv.Itoa(i + 1))
			default:
				sb.WriteByte(b[i])
			}
			if col < 2 {
				sb.WriteString(" | ")
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

type game struct {
	c           *neuro.Client
	out         io.Writer
	in          *lineReader
	auto        bool
	turnTimeout time.Duration
	url         string
	dialErrs    <-chan *neuro.DialError // first failed dial of each outage

	mu      sync.Mutex // guards following (the validator runs on the SDK's goroutine)
	b       board
	refusal string // why Neuro's last move was refused, until shown
}

// errEndOfInput ends the demo cleanly when stdin runs out.
var errEndOfInput = errors.New("end of input")

// lineReader reads the player's moves, one a line.
type lineReader struct{ s *bufio.Scanner }

func newLineReader(r io.Reader) *lineReader { return &lineReader{s: bufio.NewScanner(r)} }

// next returns the next line, errEndOfInput at the end, or a read error.
func (l *lineReader) next() (string, error) {
	if l.s.Scan() {
		return l.s.Text(), nil
	}
	if err := l.s.Err(); err != nil {
		return "", fmt.Errorf("reading your move: %w", err)
	}
	return "", errEndOfInput
}

type placeArgs struct {
	Cell int `json:"cell"`
}

func (g *game) placeAction() neuro.Action {
	return neuro.Action{
		Name:        "place_o",
		Description: "Place your O on a free cell of the tic-tac-toe board (cells are numbered 1 to 9, left to right, top to bottom).",
		Schema:      neuro.Object(map[string]neuro.Schema{"cell": neuro.Integer().Range(1, 9)}, "cell").JSON(),
		Validate: neuro.Bind(func(ctx context.Context, a placeArgs) neuro.Result {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.b[a.Cell-1] != 0 {
				msg := fmt.Sprintf("cell %d is taken; free cells: %s", a.Cell, join(g.b.free()))
				g.refusal = msg
				return neuro.Fail(msg)
			}
			return neuro.OK("")
		}),
	}
}

func join(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func (g *game) play(ctx context.Context) error {
	g.mu.Lock()
	g.b = board{}
	g.mu.Unlock()
	if err := g.c.ContextSilent("A new game of tic-tac-toe starts. The player is X and moves first; you are O."); err != nil {
		return err
	}
	turn := byte('X')
	for {
		g.mu.Lock()
		b := g.b
		g.mu.Unlock()
		fmt.Fprintf(g.out, "\n%s", b.markdown())
		if w := b.winner(); w != 0 || len(b.free()) == 0 {
			res := "draw"
			if w != 0 {
				res = string(w) + " wins"
			}
			fmt.Fprintf(g.out, "game over: %s\n", res)
			return g.c.ContextLoud("Game over: " + res + ".")
		}
		var err error
		if turn == 'X' {
			err = g.playerTurn()
		} else {
			err = g.neuroTurn(ctx)
		}
		if err != nil {
			return err
		}
		turn = 'X' + 'O' - turn
	}
}

func (g *game) set(cell int, mark byte) {
	g.mu.Lock()
	g.b[cell-1] = mark
	g.mu.Unlock()
}

func (g *game) playerTurn() error {
	g.mu.Lock()
	b := g.b
	g.mu.Unlock()
	cell := 0
	if g.auto {
		cell = b.free()[0]
	}
	for cell == 0 {
		fmt.Fprintf(g.out, "Your move (X), one of %s: ", join(b.free()))
		line, err := g.in.next()
		if err != nil {
			return err
		}
		n, why := b.parseMove(line)
		if why != "" {
			fmt.Fprintf(g.out, "%s; type one of %s.\n", why, join(b.free()))
			continue
		}
		cell = n
	}
	fmt.Fprintf(g.out, "You place X on %d.\n", cell)
	g.set(cell, 'X')
	return g.c.ContextSilent(fmt.Sprintf("The player placed X on cell %d.", cell))
}

// parseMove reads a player's move; when it is refused, why says why.
func (b *board) parseMove(line string) (cell int, why string) {
	line = strings.TrimSpace(line)
	n, err := strconv.Atoi(line)
	switch {
	case line == "":
		return 0, "no move given"
	case err != nil:
		return 0, fmt.Sprintf("%q is not a cell number", line)
	case n < 1 || n > 9:
		return 0, fmt.Sprintf("there is no cell %d (cells are 1 to 9)", n)
	case b[n-1] != 0:
		return 0, fmt.Sprintf("cell %d is taken", n)
	}
	return n, ""
}

// neuroTurn forces her choice and runs the game loop's poll until her move
// arrives, as a main-thread game loop would.
func (g *game) neuroTurn(ctx context.Context) error {
	g.mu.Lock()
	state := "Board (X is the player, O is you; digits are free cells):\n\n" + g.b.markdown()
	g.mu.Unlock()
	h, err := g.c.Force(neuro.Force{
		Query:     "It is your turn. Place your O on a free cell.",
		State:     state,
		Ephemeral: true,
		Actions:   []string{"place_o"},
		Timeout:   g.turnTimeout,
	}, neuro.ForceQueue)
	if err != nil {
		return err
	}
	fmt.Fprintln(g.out, "Neuro is thinking...")
	tick := time.NewTicker(16 * time.Millisecond) // one frame
	defer tick.Stop()
	var evs []neuro.Event
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case de := <-g.dialErrs:
			fmt.Fprintf(g.out, "Neuro is unreachable at %s (%v); still trying every few seconds. Ctrl-C to quit.\n", g.url, de.Err)
		case <-tick.C:
		}
		evs = g.c.Poll(evs[:0])
		for _, ev := range evs {
			if g.handle(ev) {
				return nil
			}
		}
		switch o := h.Outcome(); {
		case o == neuro.ForceTimedOut:
			return fmt.Errorf("Neuro did not move within --turn-timeout %v.\n"+
				"  Check that the server answers forces (see the wire messages, or drop --quiet),\n"+
				"  or give her longer with --turn-timeout.", g.turnTimeout)
		case o.Final() && o != neuro.ForceCompleted:
			return fmt.Errorf("Neuro's turn ended without a move (%v); please report this with the wire messages", o)
		}
	}
}

// handle reacts to one event; it reports whether Neuro's move was made.
func (g *game) handle(ev neuro.Event) bool {
	switch ev := ev.(type) {
	case *neuro.Invocation:
		if a, ok := ev.Value.(placeArgs); ok {
			fmt.Fprintf(g.out, "Neuro places O on %d.\n", a.Cell)
			g.set(a.Cell, 'O')
			return true
		}
	case neuro.StartupAck:
		fmt.Fprintf(g.out, "Connected to %s.\n", peertext.Clip(ev.DisplayName, peertext.LogBytes)) // escaped (issue #16)
	case neuro.ForceUpdate:
		if ev.Outcome == neuro.ForceRetrying {
			g.mu.Lock()
			why := g.refusal
			g.refusal = ""
			g.mu.Unlock()
			if why == "" {
				why = "her data did not match the action's schema"
			}
			fmt.Fprintf(g.out, "Neuro's move was refused: %s. She tries again.\n", why)
		}
	case neuro.Disconnected:
		fmt.Fprintf(g.out, "Disconnected (%s); reconnecting.\n", peertext.Clip(fmt.Sprint(ev.Err), peertext.LineBytes))
	}
	return false
}
