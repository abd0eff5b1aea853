package xiaotangyuan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

func ExampleSaveID() {
	id := xty.SaveID("dst", "slot-1")
	fmt.Println(id, xty.ValidateSaveID(id) == nil)
	// Output: 77d62aaefebfcb76ded91f7915d46dfec44af463d5ec7159f2cb19dfc9ce341b true
}

func ExampleClient() {
	// A fake Harness stands in for the real one at ws://127.0.0.1:32145.
	h := xtytest.NewServer(&xtytest.Options{Agent: func(ctx context.Context, t *xtytest.Turn) (string, error) {
		res, err := t.CallAtom(ctx, "mygame.count_apples", nil)
		if err != nil {
			return "", err
		}
		t.Say("You have ")
		t.Say(string(res) + " apples.")
		return "You have " + string(res) + " apples.", nil
	}})
	defer h.Close()

	c, err := xty.New(&xty.Options{
		AdapterID: "example-adapter", GameID: "mygame", Version: "1.0.0",
		URL: h.URL, HTTPClient: h.Client(), // omit both for the real Harness
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.HandleAtom("mygame.count_apples", func(ctx context.Context, args json.RawMessage) (any, error) {
		return 3, nil
	})
	if err := c.Connect(context.Background()); err != nil {
		log.Fatal(err)
	}
	reply, err := c.Chat(context.Background(), "How many apples do I have?", &xty.ChatContext{PlayerName: "Ann"})
	if err != nil {
		log.Fatal(err)
	}
	// The stream events arrived before the result. A game loop polls
	// them once per frame; a goroutine could range over c.Events().
	for _, ev := range c.Poll(nil) {
		if ev.Kind == xty.EventText {
			fmt.Printf("showing: %q\n", ev.Text)
		}
	}
	fmt.Println("reply:", reply.Text)
	// Output:
	// showing: "You have "
	// showing: "You have 3 apples."
	// reply: You have 3 apples.
}
