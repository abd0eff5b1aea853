// Package neurotest is an in-process fake Neuro server for testing games
// built on package neuro, in the shape of net/http/httptest:
//
//	srv := neurotest.NewServer(nil) // started; NewUnstartedServer + Start to start later
//	defer srv.Close()
//	c, err := neuro.New("My Game", &neuro.Options{URL: srv.URL, HTTPClient: srv.Client()})
//
// A [Server] speaks the Neuro game API in one of two modes, each fact
// with its source in docs/neuro-protocol.md. [Strict] follows the
// published API as the real Neuro does: startup clears the
// game's actions and is acknowledged, the first definition of a name wins,
// one force at a time, a 20 s result timeout without retry, late results
// dropped, context held while a result is pending. [Randy] behaves like the
// official Randy mock (reregister_all on connect, a never-cleared global
// action list, retry of the same action after a failure) without its
// races. Both answer a force with a random registered action after a delay
// (500 ms by default), with data generated from the action's schema.
//
// [Options.Unforced] makes it act on its own now and then, as Neuro may.
// Tests script the fake: [Server.Act] and [Server.SendAction] send unforced
// actions (SendAction with data verbatim, to inject malformed or
// off-schema data), [Server.NextData] corrupts the next forced action,
// [Server.SpeechFinished], [Server.Send] and [Server.SendRaw] send events,
// [Server.Disconnect] and [Server.SetDown] exercise reconnects, and
// [Server.Restart] is the restart mode: the same address, a fresh server
// (ids from "0" again, no state kept), as when Neuro or Randy is killed and
// started again. They observe
// it with [Server.Received], [Server.Results], [Server.Contexts],
// [Server.Actions] and [Server.Findings] (what the Gary conformance tool
// would report about the traffic), and wait with [Server.Wait].
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
// binds loopback addresses only. Outgoing queues are bounded (256
// messages a connection); a client that does not read is disconnected.
package neurotest
