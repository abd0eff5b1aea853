package enginetest

import (
	"net/http"
	"time"
)

// Options configures an Engine. Nil or zero fields take the defaults
// stated on each.
type Options struct {
	// Origin sent when dialing. If empty, https://rpengine.gemtavern.com.
	Origin string
	// HTTPClient carries the WebSocket upgrade of Dial and DialRaw, as in
	// websocket.DialOptions. If nil, http.DefaultClient: a real loopback
	// connection. [Listener.Client] connects in memory. Unused by
	// DialMailbox.
	HTTPClient *http.Client
	// ClientVersion sent in hello. If empty, "enginetest".
	ClientVersion string
	// Responder scripts the reply to each request. If nil, a reply is
	// generated from the event: two sentences echoing the text.
	Responder func(Request) Script
	// QueueLimit is the engine's queue limit: advertised as queueLimit,
	// and enforced as upstream's engine enforces it: a reply.request or
	// voice.capture.start arriving while queued, active and capturing
	// requests number QueueLimit is refused with a retryable
	// capacity_exceeded. If zero, 20 (upstream's).
	QueueLimit int
	// SecondsPerSentence is how much speech each sentence gets. If zero,
	// 0.5 s (two chunks of at most 32 KiB at 44.1 kHz).
	SecondsPerSentence float64
	// Faults injects faults; see Faults. They can be changed later with
	// Engine.SetFaults.
	Faults Faults
	// Logf, if set, receives a line per notable event (for t.Logf).
	Logf func(format string, args ...any)
}

// Faults are the fault knobs of the fake engine. The zero value is a
// well-behaved engine.
type Faults struct {
	// Delay is slept before every reply message (accepted onwards).
	Delay time.Duration
	// Duplicate sends every engine message except acks twice, with the
	// same messageId.
	Duplicate bool
	// DropAcks stops the engine acking game messages.
	DropAcks bool
	// ForceResync refuses the next N patch or reference transfers with
	// card_resync_required, as an engine that lost its card cache would
	// (the cache entry is dropped too).
	ForceResync int
	// UpstreamHash hashes cards as upstream's engine does: sorted keys but
	// numbers printed as written (1.0 stays 1.0, 1e21 stays 1e21, big
	// integers kept) instead of RFC 8785. A card holding such numbers then
	// never matches the game's targetHash: the refused-snapshot path.
	UpstreamHash bool
	// CapacityFull advertises acceptingRequests false, and refuses
	// requests with capacity_exceeded.
	CapacityFull bool
	// ErrorCode, when set, answers every reply.request and
	// voice.capture.start with a request.error of that code (retryable
	// for card_resync_required and capacity_exceeded, as upstream).
	ErrorCode string
	// ErrorAfterAccept sends reply.accepted before the ErrorCode error.
	ErrorAfterAccept bool
	// IgnoreCancel makes request.cancel of an active reply race with its
	// completion: the reply completes, then reply.cancelled not_active.
	IgnoreCancel bool
	// DisconnectAfter closes the connection abruptly after the engine has
	// sent that many messages in the session (0: never).
	DisconnectAfter int
	// Silent accepts requests but never produces them (to test timeouts).
	Silent bool
}

type options struct {
	Options
}

func (o *Options) withDefaults() options {
	var d options
	if o != nil {
		d.Options = *o
	}
	if d.Origin == "" {
		d.Origin = "https://rpengine.gemtavern.com"
	}
	if d.ClientVersion == "" {
		d.ClientVersion = "enginetest"
	}
	if d.QueueLimit <= 0 {
		d.QueueLimit = 20
	}
	if d.SecondsPerSentence <= 0 {
		d.SecondsPerSentence = 0.5
	}
	if d.Logf == nil {
		d.Logf = func(string, ...any) {}
	}
	return d
}
