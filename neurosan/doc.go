// Package neurosan lets a game ask NeuroSan agent networks
// (cognizant-ai-lab/neuro-san) for what its characters and systems need: a
// quest designer, a shopkeeper's economy, a strategy advisor. The game
// sends a turn over the server's HTTP API, reads the agents' messages as
// they stream back, and keeps the conversation in its save file.
//
//	c, err := neurosan.New("http://localhost:8080", nil) // https:// for remote hosts
//	err = c.Connect(ctx)                                 // one readiness probe: HTTP keeps no connection
//	conv := neurosan.NewConversation(c, "games/quest_designer", nil)
//	conv.SetSlyData("town_id", 42)                       // private data, never in LLM text
//	ans, err := conv.Send(ctx, "A quest for the harbour town")
//	fmt.Println(ans.Text, string(ans.Structure))
//	slot, err := conv.MarshalJSON()                      // keep in the save file; UnmarshalJSON restores
//	c.Close()                                            // cancels what is in flight
//
// This is the shape of every client in the module: [New] starts nothing,
// [Client.Connect] is the first network operation, events come per turn
// from a [Stream] ([Client.StreamingChat], then [Stream.Events] or
// [Stream.Next], then [Stream.Answer]; [Conversation.Stream] for a
// conversation), and [Client.Close] stops everything. The server keeps no
// session: a [Conversation] carries the opaque chat_context and the game's
// private sly_data from turn to turn. Package neurosantest is a fake server
// for tests. docs/neurosan.md is the guide: how the client works,
// timeouts and cancelling, and testing.
//
// # Protocol
//
// neuro-san's HTTP API (its OpenAPI description, agent_service.json):
// GET /api/v1/list, /api/v1/{agent}/function and /connectivity, and POST
// /api/v1/{agent}/streaming_chat, whose chunked body carries one JSON
// object per message, plus the health probes ([Client.Ready],
// [Client.Live]) and the direct call of a coded tool ([Client.CallTool]).
// The stream is read as a sequence of JSON objects, not as lines: an
// object may be far over 64 KiB, share a line or lack its newline. A
// failure after the 200 status is a [*StreamError], an error after a
// complete answer does not lose it ([ErrAfterAnswer]), and a 503 before
// the stream is retried. The server is Python: NaN and Infinity are read
// ([Unmarshal]). Timeouts default to the server's, none; NeuroSan has no
// cancel call (see [Stream.Close]). docs/neurosan-protocol.md records how
// the server behaves, and where each fact comes from.
//
// # Concurrency
//
// A [Client] may be used from many goroutines and starts none of its own,
// except one writing Options.Recorder when it is set; [Client.Close]
// cancels its requests and streams in flight, and stops that one. A
// [Stream] is read from one goroutine; its Close may be called from any
// goroutine. A [Conversation] allows one turn at a time.
//
// # Security
//
// NeuroSan servers have no authentication by default and bind every
// interface; sly_data and chat_context travel in the clear over http://,
// so [New] warns of plain http:// to a host that is not loopback. A
// redirect is followed only where the base URL's rules allow, the
// server's text in an error is clipped, and every object read is bounded
// by Options.ReadLimit. The Recorder's log contains sly_data.
package neurosan
