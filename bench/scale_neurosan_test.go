package bench

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// BenchmarkScaleNeurosanStream is the NeuroSan row of the scaling table:
// one turn whose stream has n frames, at n, 4n and 16n. The fake server
// (neurosantest, in memory, MAXIMAL, so each line echoes the request as
// the server does) streams n intermediate AI messages of the front-man
// and the final answer; the game reads every message with Next, then
// the answer. Each frame has the same size whatever n, so the bytes on
// the wire grow as n.
func BenchmarkScaleNeurosanStream(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchmarkNeurosanStream(b, n) })
	}
}

func benchmarkNeurosanStream(b *testing.B, n int) {
	agent := neurosantest.Agent{Name: "games/narrator", Script: func(ctx context.Context, t *neurosantest.Turn) neurosantest.Reply {
		for i := range n {
			if t.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: fmt.Sprintf("The narrator thinks, step %5d.", i)}) != nil {
				return neurosantest.Reply{}
			}
		}
		return neurosantest.Reply{Text: "The end."}
	}}
	srv := neurosantest.NewServer(&neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	defer srv.Close()
	c, err := neurosan.New(srv.URL, &neurosan.Options{HTTPClient: srv.Client()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	req := &neurosan.ChatRequest{Text: "Tell the tale.", Filter: neurosan.FilterMaximal}
	turn := func() {
		st, err := c.StreamingChat(ctx, agent.Name, req)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		got := 0
		for {
			if _, err := st.Next(ctx); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			got++
		}
		ans, err := st.Answer(ctx)
		if err != nil || ans.Text != "The end." || got != n+1 {
			b.Fatalf("answer %v, %v; %d messages of %d", ans, err, got, n+1)
		}
	}
	turn() // warm up
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		turn()
	}
	cpu.report(b)
}
