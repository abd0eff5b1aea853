package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/neurotest"
)

// BenchmarkScaleNeuroActions is the Neuro row of the scaling table: a
// game with n actions, at n, 4n and 16n. One operation is a client's
// session with the fake Neuro (neurotest, Strict, in memory): the game
// registers its n actions one call at a time, as a game adds them when
// it starts, connects (startup and the whole set), answers one
// actions/reregister_all (the whole set again), and Neuro then uses each
// action once, each answered before the next is sent, as she acts one
// at a time. Every part is linear in n when nothing is quadratic: the
// bytes registered grow as n, and so do the actions answered.
func BenchmarkScaleNeuroActions(b *testing.B) {
	for _, n := range []int{10, 40, 160} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchmarkNeuroActions(b, n) })
	}
}

func benchmarkNeuroActions(b *testing.B, n int) {
	srv := neurotest.NewServer(nil)
	defer srv.Close()
	actions := make([]neuro.Action, n)
	for i := range actions {
		actions[i] = neuro.Action{Name: fmt.Sprintf("move_%d", i), Description: "Move a piece to a cell of the board.",
			Schema: neuro.Object(map[string]neuro.Schema{"cell": neuro.Integer().Range(1, 9)}, "cell").JSON()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wait := func(what string, cond func() bool) {
		if err := srv.Wait(ctx, cond); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	session := func() {
		srv.Restart() // a fresh Neuro: nothing kept from the last session
		c, err := neuro.New("Bench", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client(), MaxEvents: n + 16})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for _, a := range actions {
			if err := c.Register(a); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Connect(ctx); err != nil {
			b.Fatal(err)
		}
		wait("registered", func() bool { return len(srv.Actions()) == n })
		srv.Send("actions/reregister_all", nil)
		wait("registered again", func() bool { return countOf(srv.Commands(), "actions/register") == 2 })
		for i, a := range actions {
			srv.SendAction(a.Name, `{"cell":5}`)
			wait("answered", func() bool { return len(srv.Results()) == i+1 })
		}
		if got := c.Poll(nil); len(got) < n {
			b.Fatalf("%d events for %d actions", len(got), n)
		}
		for _, r := range srv.Results() {
			if !r.Success {
				b.Fatalf("result %+v", r)
			}
		}
	}
	session() // warm up
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		session()
	}
	cpu.report(b)
}

func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}
