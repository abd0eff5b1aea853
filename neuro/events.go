package neuro

import "encoding/json"

// Event is something that happened on the connection, received in order
// with [Client.Next], [Client.Events] or [Client.Poll]. The concrete types
// are [Connected], [Disconnected], [StartupAck], [SpeechFinished],
// [ReregisterAll], [ShutdownGraceful], [ShutdownImmediate], [*Invocation]
// and [ForceUpdate].
type Event interface{ isEvent() }

// Connected is delivered when a connection opened; startup and the full
// action set are the first messages queued on it.
type Connected struct {
	URL string
}

// Disconnected is delivered once per outage, when an open connection is
// lost (not for every failed reconnect attempt, so a server that is down
// does not flood the game's log).
type Disconnected struct {
	Err error // why the connection ended
}

// StartupAck is Neuro's optional reply to startup, naming the character the
// game is connected to. It "may be sent": the SDK never waits for it. A
// startup from the server without a session is no acknowledgement: it is
// logged as a *[ProtocolError].
type StartupAck struct {
	SessionID   string // opaque server session id
	CharacterID string // "neuro" or "evil"
	DisplayName string // "Neuro-sama" or "Evil Neuro"; CharacterID when the ack has none, as the official SDKs do
}

// SpeechFinished is sent while Neuro speaks; wait for IsFinal. A cancelled
// utterance still ends with IsFinal true.
type SpeechFinished struct {
	IsFinal   bool
	Cancelled bool   // her speech was cut off
	Reason    string // why, if cancelled (e.g. "interrupted")
}

// ReregisterAll is the (proposed, deprecated) request to re-send every
// action. The SDK answers it itself with one actions/register of the whole
// set, unless it crossed the registration sent on connect (it is the
// connection's first message, as Randy sends it on every connection, or
// that registration is still unsent); the event only informs.
type ReregisterAll struct{}

// ShutdownGraceful is the proposed request to quit to the main menu at the
// next safe point. Store the latest WantsShutdown; when it is true and the
// game has saved, call [Client.ShutdownReady].
type ShutdownGraceful struct {
	WantsShutdown bool
}

// ShutdownImmediate is the proposed request to save within seconds, then
// call [Client.ShutdownReady].
type ShutdownImmediate struct{}

// Invocation is one action by Neuro that passed schema validation and the
// game's validator, and whose successful result has already been sent. The
// game executes it: [Action.Execute] is called with it by the call that
// receives it ([Client.Next], [Client.Events], [Client.Poll]), which then
// returns it.
type Invocation struct {
	ID   string          // the action id from Neuro
	Name string          // the action name, without the client's prefix
	Data json.RawMessage // the validated data; nil when Neuro sent none

	// Value is whatever the validator returned in [Result.Value], so that
	// Execute need not parse Data again.
	Value any

	wire string // the name Neuro knows (with the client's prefix)
}

// Decode unmarshals the invocation's data into v, as encoding/json does,
// except that a number whose fraction is zero (1.0, 1e2), which the
// schema's "integer" accepts, decodes into an integer field too (such
// numbers reach v, json.Number and json.RawMessage fields included,
// written as integers). Data absent decodes as {}.
func (inv *Invocation) Decode(v any) error {
	return decodeArgs(inv.Data, v)
}

// wireName returns the action's name as Neuro knows it.
func (inv *Invocation) wireName() string {
	if inv.wire != "" {
		return inv.wire
	}
	return inv.Name
}

// ForceUpdate reports a change in a force's state; see [ForceOutcome].
type ForceUpdate struct {
	Force   *ForceHandle
	Outcome ForceOutcome
}

func (Connected) isEvent()         {}
func (Disconnected) isEvent()      {}
func (StartupAck) isEvent()        {}
func (SpeechFinished) isEvent()    {}
func (ReregisterAll) isEvent()     {}
func (ShutdownGraceful) isEvent()  {}
func (ShutdownImmediate) isEvent() {}
func (*Invocation) isEvent()       {}
func (ForceUpdate) isEvent()       {}
