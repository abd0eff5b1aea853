package xiaotangyuan

import (
	"strconv"
	"time"
)

// EventKind says what an [Event] reports.
type EventKind uint8

// The event kinds. Start, Text, Done and Cancel come from the stream
// notifications through an [Assembler]; the others map one notification
// each, except Connected and Disconnected, which are local.
const (
	EventReady        EventKind = iota + 1 // gateway.ready: ProtocolVersion, Capabilities
	EventConnected                         // adapter.hello accepted on a new connection
	EventDisconnected                      // the connection ended: Err is a *DisconnectError
	EventStart                             // assistant.text.start: InteractionID, Source
	EventText                              // a delta: Text replaces the displayed text; StepReset
	EventDone                              // assistant.text.done: Text is the final text
	EventCancel                            // assistant.text.cancel: Reason "barge-in"; or an abandoned chat's stream ends: Reason ReasonAbandoned, InteractionID
	EventPresent                           // assistant.present: Text, Source
	EventStatus                            // assistant.status: Status, Transcript
	EventError                             // assistant.error: Message
)

var eventNames = [...]string{"", "Ready", "Connected", "Disconnected", "Start", "Text", "Done", "Cancel", "Present", "Status", "Error"}

// String returns the kind's name without the Event prefix, e.g. "Text".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Source says what produced a reply.
type Source string

// The sources the Harness sends.
const (
	SourceChat      Source = "chat"
	SourceVoice     Source = "voice"
	SourceRetry     Source = "retry"
	SourceProactive Source = "proactive"
)

// Status is the voice state of assistant.status.
type Status string

// The two statuses.
const (
	StatusRecording Status = "recording" // the media host started recording push-to-talk
	StatusThinking  Status = "thinking"  // recording stopped; Transcript may carry the ASR text
)

// Event is one thing the Harness told the game, already assembled. Only
// the fields named for its Kind are set. Events are values: the receiver
// owns them.
type Event struct {
	Kind          EventKind     // what happened; says which fields below are set
	InteractionID string        // Start, Text, Done; Cancel of an abandoned chat
	Source        Source        // Start, Text, Done, Present
	Text          string        // Text: the whole text to display now; Done, Present: the final text
	Delta         string        // Text: the new part, for logging only (never concatenate it)
	StepReset     bool          // Text: the model began a new step and Text restarted from empty
	Elapsed       time.Duration // Text: elapsedMs since the interaction began
	Status        Status        // Status
	Transcript    string        // Status (thinking): partial or final speech transcript
	Message       string        // Error: the Harness's message
	Reason        string        // Cancel: "barge-in", or ReasonAbandoned
	Err           error         // Disconnected: why the connection ended (a *DisconnectError)

	ProtocolVersion string   // Ready
	Capabilities    []string // Ready
}
