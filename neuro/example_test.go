package neuro_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

func ExampleSchema_JSON() {
	s := neuro.Object(map[string]neuro.Schema{
		"cell": neuro.Integer().Range(1, 9),
		"mood": neuro.Enum("smug", "nervous"),
	}, "cell")
	fmt.Println(string(s.JSON()))
	// Output:
	// {"properties":{"cell":{"maximum":9,"minimum":1,"type":"integer"},"mood":{"enum":["smug","nervous"]}},"required":["cell"],"type":"object"}
}

func ExampleLintSchema() {
	schema := []byte(`{"type":"object","additionalProperties":false,"properties":{"items":{"type":"array","uniqueItems":true}}}`)
	for _, f := range neuro.LintSchema(schema) {
		fmt.Println(f.Key, f.Path)
	}
	// Output:
	// prot/schema/unsupported_keywords /additionalProperties
	// prot/schema/unique_items /properties/items/uniqueItems
}

// Example shows the whole flow against the fake server: register an action
// with a schema and a validator, connect, force Neuro to choose, and execute
// her validated choice where events are received.
func Example() {
	srv := neurotest.NewServer(&neurotest.Options{Delay: time.Millisecond})
	defer srv.Close()

	done := make(chan int, 1)
	c, err := neuro.New("Dice Game", &neuro.Options{
		URL: srv.URL, HTTPClient: srv.Client(), // omit both to dial $NEURO_SDK_WS_URL
		Prefix: "dice_",
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	go func() {
		for range c.Events() { // Execute runs here; a game loop calls c.Poll each frame instead
		}
	}()

	type rollArgs struct {
		Dice int `json:"dice"`
	}
	err = c.Register(neuro.Action{
		Name:        "roll",
		Description: "Roll some dice.",
		Schema:      neuro.Object(map[string]neuro.Schema{"dice": neuro.Integer().Range(1, 3)}, "dice").JSON(),
		Validate: neuro.Bind(func(ctx context.Context, a rollArgs) neuro.Result {
			return neuro.OK(fmt.Sprintf("Rolling %d dice.", a.Dice))
		}),
		Execute: func(inv *neuro.Invocation) { done <- inv.Value.(rollArgs).Dice },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		panic(err)
	}
	h, err := c.Force(neuro.Force{Query: "Roll the dice.", Actions: []string{"roll"}}, neuro.ForceRefuse)
	if err != nil {
		panic(err)
	}
	outcome, err := h.Wait(ctx)
	if err != nil {
		panic(err)
	}
	n := <-done
	fmt.Println(outcome, n >= 1 && n <= 3, srv.Actions())
	// Output: completed true [dice_roll]
}

// ExampleClient_Window opens an action window as the official SDKs'
// ActionWindow does: context with the registration, a force once a
// condition holds, and the actions unregistered when her choice succeeds.
func ExampleClient_Window() {
	srv := neurotest.NewServer(&neurotest.Options{Delay: time.Millisecond})
	defer srv.Close()
	c, err := neuro.New("Dungeon", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	go func() {
		for range c.Events() { // the window's condition is checked here
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		panic(err)
	}

	var lidOpen atomic.Bool // set by the game loop when the chest's lid is open
	h, err := c.Window(neuro.Window{
		Actions: []neuro.Action{{
			Name:        "pick_reward",
			Description: "Take one thing from the chest.",
			Schema:      neuro.Object(map[string]neuro.Schema{"reward": neuro.Enum("gold", "sword")}, "reward").JSON(),
		}},
		Context:   "You found a chest.",
		Force:     &neuro.Force{Query: "Pick your reward.", Ephemeral: true},
		ForceWhen: lidOpen.Load, // or ForceAfter: 5 * time.Second
		EndAfter:  time.Minute,  // gone if she was never forced
	}, neuro.ForceQueue)
	if err != nil {
		panic(err)
	}
	lidOpen.Store(true)
	outcome, err := h.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(outcome, c.Actions())
	// Output: completed []
}
