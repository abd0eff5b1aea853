package neurosantest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// A game's test talks to the demo quest designer through a real client. The
// fake keeps no session, like NeuroSan: the second turn remembers the first
// only because the Conversation sends the answer's chat_context back.
func ExampleNewServer() {
	fake := neurosantest.NewServer(&neurosantest.Options{
		Agents: neurosantest.DemoAgents(),
	})
	defer fake.Close() // cuts open streams and waits for every script

	client, err := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	conv := neurosan.NewConversation(client, "games/quest_designer", nil)
	for _, text := range []string{"a haunted mill", "with a dragon"} {
		ans, err := conv.Send(ctx, text)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ans.Text)
	}

	// The fake records what each turn carried.
	for i, turn := range fake.Turns() {
		fmt.Printf("turn %d to %s sent chat_context: %t\n", i+1, turn.Agent, len(turn.ChatContext) > 0)
	}
	// Output:
	// Quest 1: about "a haunted mill", find the cat by the old well.
	// Quest 2: about "with a dragon", find the cat by the old well.
	// turn 1 to games/quest_designer sent chat_context: false
	// turn 2 to games/quest_designer sent chat_context: true
}

// A scripted agent stands in for the game's own network: its Script sees
// the turn's text, history and sly_data, streams intermediate messages with
// Emit, and answers with a Reply, or with a Fault to test the game's error
// path.
func ExampleAgent() {
	shop := neurosantest.Agent{
		Name:     "shop/keeper",
		FrontMan: "keeper",
		Script: func(ctx context.Context, t *neurosantest.Turn) neurosantest.Reply {
			if t.Text == "steal the sword" {
				// The stream has started (200): the error arrives inside it.
				return neurosantest.Reply{Fault: neurosantest.FaultInternal}
			}
			progress := neurosan.ChatMessage{
				Type:      neurosan.TypeAgentProgress,
				Structure: json.RawMessage(`{"progress":0.5}`),
			}
			if t.Emit(ctx, progress) != nil {
				return neurosantest.Reply{} // the client went away
			}
			return neurosantest.Reply{
				Text:      "The sword costs 30 gold.",
				Structure: json.RawMessage(`{"price":30}`),
			}
		},
	}
	fake := neurosantest.NewServer(&neurosantest.Options{
		Agents: []neurosantest.Agent{shop},
	})
	defer fake.Close()

	client, err := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	conv := neurosan.NewConversation(client, "shop/keeper", &neurosan.ConversationOptions{
		Filter: neurosan.FilterMaximal, // intermediate messages too
	})

	turn, err := conv.Stream(ctx, "buy the sword")
	if err != nil {
		log.Fatal(err)
	}
	defer turn.Close()
	for m := range turn.Events() {
		if p, ok := m.Progress(); ok {
			fmt.Printf("%s from %s: %.0f%%\n", m.Type, m.Origin[0].Tool, p*100)
		}
	}
	ans, err := turn.Answer(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s %s\n", ans.Type, ans.Text, ans.Structure)

	_, err = conv.Send(ctx, "steal the sword")
	var se *neurosan.StreamError
	if errors.As(err, &se) {
		fmt.Printf("stream error: %q, timeout: %t\n", se.Message, se.Timeout())
	}
	// Output:
	// AGENT_PROGRESS from keeper: 50%
	// AGENT_FRAMEWORK: The sword costs 30 gold. {"price": 30}
	// stream error: "Internal server error", timeout: false
}
