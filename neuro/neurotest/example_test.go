package neurotest_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// ExampleServer tests a game's action against the fake in Strict mode: the
// client connects in memory through Server.Client, registers an action,
// forces Neuro to choose, and the fake answers with data generated from the
// schema (the same data for the same Seed). The server's findings are empty
// when the game followed the protocol.
func ExampleServer() {
	srv := neurotest.NewServer(&neurotest.Options{
		Mode:  neurotest.Strict,
		Delay: time.Millisecond, // answer forces at once (500 ms by default)
		Seed:  7,                // log it in real tests
	})
	defer srv.Close()

	c, err := neuro.New("Tic Tac Toe", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	go func() {
		for range c.Events() { // runs Execute; ends at Close
		}
	}()

	type placeArgs struct {
		Cell int `json:"cell"`
	}
	placed := make(chan int, 1)
	err = c.Register(neuro.Action{
		Name:        "place",
		Description: "Place your mark in a cell, 1 to 9.",
		Schema:      neuro.Object(map[string]neuro.Schema{"cell": neuro.Integer().Range(1, 9)}, "cell").JSON(),
		Validate: neuro.Bind(func(ctx context.Context, a placeArgs) neuro.Result {
			return neuro.OK(fmt.Sprintf("Placed in cell %d.", a.Cell))
		}),
		Execute: func(inv *neuro.Invocation) { placed <- inv.Value.(placeArgs).Cell },
	})
	if err != nil {
		panic(err)
	}
	// Real time: the bound only matters if the game under test is broken.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		panic(err)
	}
	h, err := c.Force(neuro.Force{Query: "It is your turn.", Actions: []string{"place"}}, neuro.ForceRefuse)
	if err != nil {
		panic(err)
	}
	outcome, err := h.Wait(ctx)
	if err != nil {
		panic(err)
	}
	cell := <-placed
	// Let the fake take in the result before asking what it found.
	if err := srv.Wait(ctx, func() bool { return len(srv.Results()) == 1 }); err != nil {
		panic(err)
	}
	r := srv.Results()[0]
	fmt.Println("force:", outcome)
	fmt.Println("cell:", cell)
	fmt.Println("result:", r.Success, r.Message)
	fmt.Println("protocol findings:", len(protocolFindings(srv)))
	// Output:
	// force: completed
	// cell: 3
	// result: true Placed in cell 3.
	// protocol findings: 0
}

// ExampleServer_Findings shows the fake catching a protocol mistake: the
// game's validator rejects Neuro's first choice with an empty message, so she
// retries without being told what to do instead. The force still completes
// (the fake retries and the second answer is accepted), but Findings reports
// the failed result without a message, as a conformance tool would.
func ExampleServer_Findings() {
	srv := neurotest.NewServer(&neurotest.Options{Delay: time.Millisecond, Seed: 1})
	defer srv.Close()

	c, err := neuro.New("Card Game", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	var calls atomic.Int32
	err = c.Register(neuro.Action{
		Name:        "draw",
		Description: "Draw a card.",
		Validate: func(ctx context.Context, inv *neuro.Invocation) neuro.Result {
			if calls.Add(1) == 1 {
				return neuro.Fail("") // the mistake: say why, and what to do
			}
			return neuro.OK("You drew the queen of hearts.")
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		panic(err)
	}
	h, err := c.Force(neuro.Force{Query: "Draw a card.", Actions: []string{"draw"}}, neuro.ForceRefuse)
	if err != nil {
		panic(err)
	}
	outcome, err := h.Wait(ctx)
	if err != nil {
		panic(err)
	}
	if err := srv.Wait(ctx, func() bool { return len(srv.Results()) == 2 }); err != nil {
		panic(err)
	}
	fmt.Println("force:", outcome, "after", h.Failures(), "failure")
	for _, f := range protocolFindings(srv) {
		fmt.Println(f.Severity, f.Key, f.Action)
	}
	// Output:
	// force: completed after 1 failure
	// warning prot/result/error_nomessage draw
}

// protocolFindings keeps the findings about the protocol ("prot/..."):
// timing findings ("perf/...", such as a result later than 500 ms) depend
// on how loaded the machine running the example is.
func protocolFindings(srv *neurotest.Server) []neuro.Finding {
	var out []neuro.Finding
	for _, f := range srv.Findings() {
		if strings.HasPrefix(f.Key, "prot/") {
			out = append(out, f)
		}
	}
	return out
}
