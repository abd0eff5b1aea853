package xtytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// A game's test replaces the real Harness with a fake one whose agent is
// scripted, connects its client to it and checks the reply and what the
// game sent.
func ExampleServer() {
	h := xtytest.NewServer(&xtytest.Options{
		Agent: func(ctx context.Context, t *xtytest.Turn) (string, error) {
			// Stream the reply in two chunks, as a model would.
			t.Say("Hello, ")
			t.Say("traveller!")
			return "Hello, traveller!", nil
		},
	})
	defer h.Close() // deferred first, so it runs after the client's Close

	c, err := xty.New(&xty.Options{
		AdapterID: "mygame-adapter", GameID: "mygame", Version: "1.0.0",
		// The in-memory pipe to the fake; the real Harness needs neither.
		URL: h.URL, HTTPClient: h.Client(),
		HandshakeTimeout: 2 * time.Second, ChatTimeout: 5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		log.Fatal(err)
	}
	reply, err := c.Chat(ctx, "Hi!", &xty.ChatContext{Location: "cellar"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reply:", reply.Text)

	// Assert on what the game sent.
	m, err := h.WaitFor(ctx, xtytest.Method("chat.send"))
	if err != nil {
		log.Fatal(err)
	}
	var p struct {
		Text    string `json:"text"`
		Context struct {
			Location string `json:"location"`
		} `json:"context"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent: %q in the %s\n", p.Text, p.Context.Location)
	// Output:
	// reply: Hello, traveller!
	// sent: "Hi!" in the cellar
}

// The agent calls an atom the game registered, as the companion does when the
// player asks it to act in the game.
func ExampleTurn_CallAtom() {
	h := xtytest.NewServer(&xtytest.Options{
		AtomTimeout: 2 * time.Second, // the gateway's 15 s is too long for a test
		Agent: func(ctx context.Context, t *xtytest.Turn) (string, error) {
			res, err := t.CallAtom(ctx, "mygame.open_door", map[string]string{"door": "cellar"})
			if err != nil {
				return "", err // answered to the game as a -32000 error
			}
			fmt.Println("agent got:", string(res))
			return "The cellar door is open.", nil
		},
	})
	defer h.Close()

	c, err := xty.New(&xty.Options{
		AdapterID: "mygame-adapter", GameID: "mygame", Version: "1.0.0",
		URL: h.URL, HTTPClient: h.Client(),
		HandshakeTimeout: 2 * time.Second, ChatTimeout: 5 * time.Second,
		AtomTimeout: 2 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Atoms are registered before Connect: the hello declares them.
	err = c.HandleAtom("mygame.open_door", func(ctx context.Context, args json.RawMessage) (any, error) {
		fmt.Println("atom received:", string(args))
		return map[string]bool{"opened": true}, nil
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		log.Fatal(err)
	}
	// The atom runs while this chat.send is pending.
	reply, err := c.Chat(ctx, "Open the cellar door, please.", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reply:", reply.Text)
	// Output:
	// atom received: {"door":"cellar"}
	// agent got: {"opened":true}
	// reply: The cellar door is open.
}
