package neurosan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"

	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// A multi-turn conversation: the client carries chat_context from turn to
// turn, so the network remembers, and the state fits in a save slot.
func ExampleConversation() {
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()

	client, err := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	conv := neurosan.NewConversation(client, "games/quest_designer", nil)
	for _, text := range []string{"a lost cat", "make it harder"} {
		ans, err := conv.Send(ctx, text)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ans.Text, string(ans.Structure))
	}

	slot, _ := json.Marshal(conv) // store in the save file
	later := neurosan.NewConversation(client, "games/quest_designer", nil)
	if err := json.Unmarshal(slot, later); err != nil {
		log.Fatal(err)
	}
	ans, _ := later.Send(ctx, "one more")
	fmt.Println(ans.Text)
	// Output:
	// Quest 1: about "a lost cat", find the cat by the old well. {"quest": 1}
	// Quest 2: about "make it harder", find the cat by the old well. {"quest": 2}
	// Quest 3: about "one more", find the cat by the old well.
}

// sly_data carries private values beside the text; the network returns only
// what its allow-list lets out, and the conversation merges it.
func ExampleConversation_SetSlyData() {
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()
	client, _ := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})

	conv := neurosan.NewConversation(client, "math_guy", nil)
	conv.SetSlyData("x", 6)
	conv.SetSlyData("y", 7)
	ans, err := conv.Send(context.Background(), "multiply them")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ans.Text)
	fmt.Println(string(conv.SlyData()["equals"]))
	// Output:
	// 6 * 7 = 42
	// 42
}

// Streaming every message with MAXIMAL, as they arrive.
func ExampleClient_StreamingChat() {
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()
	client, _ := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})

	st, err := client.StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{
		Text:    "add",
		SlyData: map[string]json.RawMessage{"x": json.RawMessage("1"), "y": json.RawMessage("2")},
		Filter:  neurosan.FilterMaximal,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close() // closing early drops the connection; see Stream.Close
	for {
		m, err := st.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if p, ok := m.Progress(); ok {
			fmt.Printf("%s progress %.0f%%\n", m.Type, p*100)
			continue
		}
		if m.Type == neurosan.TypeAgentFramework {
			fmt.Printf("answer: %s\n", m.Text) // the final answer has no origin
			continue
		}
		fmt.Printf("%s %s: %s\n", m.Type, m.Origin[len(m.Origin)-1].Tool, m.Text)
	}
	// Output:
	// AI math_guy: Calling the calculator with x + y.
	// AGENT_PROGRESS progress 50%
	// AGENT_TOOL_RESULT calculator: 3
	// answer: 1 + 2 = 3
}

// The server is Python: a float that is not finite arrives as NaN,
// Infinity or -Infinity, which raw fields keep as written and Unmarshal
// decodes.
func ExampleUnmarshal() {
	structure := json.RawMessage(`{"mean": NaN, "range": [-Infinity, Infinity], "n": 0}`)
	var stats struct {
		Mean  float64
		Range []float64
		N     int
	}
	if err := neurosan.Unmarshal(structure, &stats); err != nil {
		log.Fatal(err)
	}
	fmt.Println(math.IsNaN(stats.Mean), stats.Range, stats.N)
	// Output:
	// true [-Inf +Inf] 0
}

// A launcher waits for the server to be ready, then calls a network's
// coded tool directly, without its agents.
func ExampleClient_CallTool() {
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()
	client, _ := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})
	ctx := context.Background()

	if _, err := client.Ready(ctx); err != nil {
		log.Fatal(err) // a real launcher would poll until ctx ends
	}
	res, err := client.CallTool(ctx, "math_guy", "calculator", &neurosan.ToolRequest{
		Args:    map[string]json.RawMessage{"operation": json.RawMessage(`"multiply"`)},
		SlyData: map[string]json.RawMessage{"x": json.RawMessage("6"), "y": json.RawMessage("7")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res.Output), string(res.SlyData["equals"]), res.Error)
	// Output:
	// 42 42 false
}
