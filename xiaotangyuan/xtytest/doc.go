// Package xtytest is a fake XiaoTangYuan Harness (the game protocol v1.1
// gateway) for a game's tests, in the shape of net/http/httptest: a test
// starts it with a scripted agent, points the game's client (package
// xiaotangyuan, or any adapter) at it, and checks the reply and what the
// game sent.
//
//	h := xtytest.NewServer(&xtytest.Options{ // started; NewUnstartedServer + Start to start later
//		Agent: func(ctx context.Context, t *xtytest.Turn) (string, error) {
//			t.Say("Hello, ") // streamed as the gateway streams it
//			return "Hello, traveller!", nil
//		},
//	})
//	defer h.Close()
//	c, err := xiaotangyuan.New(&xiaotangyuan.Options{URL: h.URL, HTTPClient: h.Client(), ...})
//	// Connect, Chat; then assert on what the game sent:
//	m, err := h.WaitFor(ctx, xtytest.Method("chat.send"))
//
// An [Agent] scripts the model: it streams chunks ([Turn.Say]), changes
// step ([Turn.Step]), calls the adapter's atoms ([Turn.CallAtom], with any
// arguments, as the gateway's skills do once earlier results are filled in)
// and barges in ([Turn.BargeIn]). [Server.BargeIn], [Server.Proactive],
// [Server.Status], [Server.Error] and [Server.SendRaw] send what the
// Harness sends on its own; [Server.Received] and [Server.WaitFor] observe
// the game. Its name is the protocol's short name, XTY, plus "test", as
// httptest and rpengine/enginetest are named: "xiaotangyuantest" would be
// the longest import name in the module, for no gain.
//
// # Protocol
//
// The fake's defaults are the real gateway's observable behaviour, faults
// included: gateway.ready on connect, the hello rules, params read as the
// gateway reads them, its error codes, every message of a connection
// processed strictly after the one before it, the stream sequences of chat,
// retry, compose, voice, barge-in and proactive replies, 80 ms delta
// coalescing, no limit on what it sends, and a message over 1 MiB closing
// its connection with 1009 and then bringing the whole Harness down, as it
// kills the gateway process. docs/xiaotangyuan.md lists them, and
// docs/xiaotangyuan-protocol.md says where each fact comes from.
//
// # Concurrency
//
// All Server methods may be called concurrently. [Server.Client]
// connects over in-memory pipes, so a Server created inside a
// testing/synctest bubble runs on the bubble's fake clock (15 s atom
// timeouts and 80 ms coalescing take no real time). [Server.Close] joins
// every goroutine. Each connection's request queue is bounded (256); a
// client overflowing it is closed with 1008.
//
// # Security
//
// The server opens no port unless [Options].Addr asks for one, and then
// binds loopback addresses only.
package xtytest
