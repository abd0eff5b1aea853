// Package neurotest is a fake Neuro server for a game's tests, in the shape
// of net/http/httptest: a test starts it, points the game's client at it,
// lets "Neuro" choose among the game's actions, and checks what the game
// sent.
//
//	srv := neurotest.NewServer(&neurotest.Options{Seed: seed}) // started; NewUnstartedServer + Start to start later
//	defer srv.Close()
//	c, err := neuro.New("My Game", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client()})
//	// register actions, Connect, Force: the fake answers the force with one of them
//	err = srv.Wait(ctx, func() bool { return len(srv.Results()) > 0 })
//	for _, f := range srv.Findings() { t.Error(f) } // what a conformance tool would report
//
// Tests script the fake: [Server.Act] and [Server.SendAction] send unforced
// actions (SendAction with data verbatim, to inject malformed or off-schema
// data), [Server.NextData] corrupts the next forced action,
// [Server.SpeechFinished], [Server.Send] and [Server.SendRaw] send events,
// [Server.Disconnect] and [Server.SetDown] exercise reconnects, and
// [Server.Restart] is the restart mode: the same address, a fresh server
// (ids from "0" again, no state kept), as when Neuro or Randy is killed and
// started again. They observe it with [Server.Received], [Server.Results],
// [Server.Contexts], [Server.Actions] and [Server.Findings] (what the Gary
// conformance tool would report about the traffic), and wait with
// [Server.Wait].
//
// # Protocol
//
// A [Server] speaks the Neuro game API in one of two modes, each fact with
// its source in docs/neuro-protocol.md. [Strict] follows the published API
// as the real Neuro does: startup clears the game's actions and is
// acknowledged, the first definition of a name wins, one force at a time, a
// 20 s result timeout without retry, late results dropped, context held
// while a result is pending. [Randy] behaves like the official Randy mock
// (reregister_all on connect, a never-cleared global action list, retry of
// the same action after a failure) without its races. Both answer a force
// with a random registered action after a delay (500 ms by default), with
// data generated from the action's schema; [Options].Unforced makes the fake
// act on its own now and then, as Neuro may.
//
// # Concurrency
//
// All methods may be called concurrently. Each connection has a reader and
// a writer goroutine, joined by [Server.Close]; timers are stopped there.
// [Server.Client] connects in memory (a WebSocket over net.Pipe), so a
// client and a server created inside a testing/synctest bubble run in fake
// time: a 20 s timeout takes no real time.
//
// # Security
//
// The server opens no port unless [Options].Addr asks for one, and then
// binds loopback addresses only. Outgoing queues are bounded (256 messages
// a connection); a client that does not read is disconnected.
package neurotest
