// Package neurosan is a client for NeuroSan agent networks
// (cognizant-ai-lab/neuro-san) over its HTTP API: a game can ask an agent
// network (a quest designer, a shopkeeper's economy, a strategy advisor) and
// read its messages as they stream back.
//
//	c, err := neurosan.New("http://localhost:8080", nil)
//	err = c.Connect(ctx)                                 // the server is up and ready
//	st, err := c.StreamingChat(ctx, "games/quest_designer", &neurosan.ChatRequest{Text: "A quest for the harbour town"})
//	for m := range st.Events() { show(m) }               // or st.Next(ctx); then st.Answer(ctx)
//	c.Close()
//
// This is the shape of every client in the module (neuro, xiaotangyuan
// too): New with an Options struct (nil for defaults) starts nothing;
// Connect is the first network operation (here one readiness probe: an
// HTTP client keeps no connection, and the other calls do not need it);
// events are received with Events or Next, here per turn, from its
// [Stream]; Close cancels what is in flight. A [Conversation] carries a
// turn's state to the next: conv.Send(ctx, text) returns the answer.
//
// # Protocol
//
// The API is neuro-san's OpenAPI description (agent_service.json, the HTTP
// form of its protos): GET /api/v1/list, GET /api/v1/{agent}/function and
// /connectivity, and POST /api/v1/{agent}/streaming_chat, whose chunked
// application/json-lines body carries one ChatResponse object per message.
// Agent names may contain '/' and are sent with the slashes unescaped. A
// game launcher also has the health probes ([Client.Ready], [Client.Live])
// and the direct call of a coded tool ([Client.CallTool]).
//
// [Client.StreamingChat] returns a [Stream] of typed messages as they
// arrive ([Stream.Next], or range over [Stream.Events]) and then the
// answer ([Stream.Answer]).
//
// The stream is read with encoding/json's streaming Decoder, not a line
// scanner, because the format has traps: several objects may share a line,
// a line may be far over 64 KiB (chat_context grows with the history, and
// MAXIMAL echoes the whole request on every line), the last object need not
// end with a newline, and after the 200 status the server reports a failure
// by appending {"error": "Request timeout"} or {"error": "Internal server
// error"} without a newline: that is a [*StreamError]. Empty {} objects and
// empty AGENT_PROGRESS heartbeat frames are skipped and counted. Unknown
// message fields are kept in [ChatMessage].Extra, and the message type is
// accepted as a string name or as its proto number.
//
// The server is Python, and json.dumps writes a float that is not finite
// as NaN, Infinity or -Infinity, which encoding/json rejects. The client
// reads them as Python does. In raw fields (Structure, ChatContext, the
// values of SlyData and Extra) they stay as the bytes the server wrote, so
// they go back to the server unchanged, as the Python client sends them;
// [Unmarshal] decodes them to the Go values math.NaN(), math.Inf(1) and
// math.Inf(-1) (in a float64, float32 or interface), and Progress reports a
// NaN progress as NaN.
//
// The answer is the last AGENT_FRAMEWORK message of the front-man (origin
// absent or of length 1): a sub-network's message, relayed with a longer
// origin, is never the answer (docs/neurosan-protocol.md). Its chat_context is the
// whole conversation state (the server keeps none); [Conversation] keeps it
// opaque, sends it back byte for byte, merges returned sly_data, can drop a
// context that outgrows a byte budget, and saves to a game's save slot.
//
// # Timeouts, cancellation and retries
//
// The knobs, against the server's defaults:
//
//   - The caller's context bounds a turn. http.Client.Timeout must be zero
//     ([New] refuses one): it would cut long streams.
//   - Options.TurnTimeout: none by default, like the server, which
//     has no request timeout unless a network sets request_timeout_seconds
//     (it then ends the turn with {"error": "Request timeout"}, a
//     [*StreamError]). Turns of several minutes are normal.
//   - Options.IdleTimeout: none by default, because the server's
//     heartbeat is off by default and a MINIMAL turn is silent until its
//     answer. With the heartbeat on
//     (AGENT_STREAM_KEEP_ALIVE_WITH_PROGRESS_INTERVAL_SECONDS = N, which is
//     also what keeps proxies that drop idle connections from cutting a
//     turn), set it to about 3N.
//   - Options.Retries and RetryBackoff: a 503 before the stream
//     starts ("Too many concurrent requests" beyond the server's
//     concurrent_requests_limit, unlimited by default; "Server is shutting
//     down", which drains for up to 30 s) is retried with exponential
//     back-off. Nothing is retried once a 200 stream has begun, because
//     the agents may already have acted.
//
// NeuroSan has no cancel call. Closing the connection ([Stream.Close], an
// ended context, a timeout) is all a client can do, and the server learns
// of it only when its next write to the stream fails: the next MAXIMAL
// message, the next heartbeat, or the final answer. With MINIMAL and the
// heartbeat off (its defaults), the agents run on to the end and hold
// their concurrency slot: the player's next turn can meanwhile get a 503.
// Turn the server's heartbeat on, or use FilterMaximal, to free it sooner.
//
// Other statuses are a [*StatusError] matching ErrBadRequest, ErrForbidden,
// ErrNotFound or ErrServer. An error that follows a complete answer (the
// server's request timeout striking during its clean-up, a connection cut)
// matches ErrAfterAnswer and does not lose the answer.
//
// # Concurrency
//
// A [Client] may be used from many goroutines and starts none of its own,
// except one writing Options.Recorder when it is set; [Client.Close]
// cancels its requests and streams in flight, and stops that one. A [Stream] is
// read from one goroutine; its Close may be called from any goroutine. A
// [Conversation] allows one turn at a time ([Conversation.Send] or
// [Conversation.Stream]).
//
// # Security
//
// NeuroSan servers have no authentication by default and bind every
// interface. sly_data and chat_context travel in the clear over http://, so
// [New] logs a warning when a plain http:// URL names a host that is not
// loopback. A redirect is followed only where the base URL's rules
// allow (a loopback base stays on this machine), and the server's text in
// an error is clipped (docs/neurosan-protocol.md).
// Every object read is bounded by Options.ReadLimit. The
// Recorder option writes a JSON Lines log of the traffic for bug reports;
// it contains sly_data, so treat it as private.
package neurosan
